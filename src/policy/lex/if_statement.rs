//! The `if … then … [elif …] [else …] fi` one-liners the lexer reads (see the parent module):
//! each list a pipeline or `&&`/`||` list of commands and tests, a command that starts a list
//! possibly negated.

use super::super::script::{Command, Script, Shape};
use super::{Lexer, MAX_COMMANDS, Operator};

impl Lexer<'_> {
    /// Whether the reserved word `word` is next (a word of its own); consumes it if so.
    pub(super) fn keyword(&mut self, word: &str) -> bool {
        let end = self.at + word.len();
        let whole = self.bytes[self.at..].starts_with(word.as_bytes())
            && matches!(self.bytes.get(end), Some(b' ' | b'\t') | None);
        if whole {
            self.at = end;
        }
        whole
    }

    /// The whole text as one `if LIST; then LIST; [elif LIST; then LIST;]… [else LIST;] fi`,
    /// each list a pipeline or `&&`/`||` list of commands and tests without redirections,
    /// ended by `;`; only blanks may follow `fi`. The lexer stands after `if`.
    pub(super) fn if_statement(&mut self) -> Option<Script> {
        let mut commands = Vec::new();
        let mut read = 0usize;
        self.list(&mut commands, &mut read)?;
        loop {
            if !self.keyword("then") {
                return None;
            }
            self.list(&mut commands, &mut read)?;
            if self.keyword("elif") {
                self.list(&mut commands, &mut read)?;
                continue;
            }
            if self.keyword("else") {
                self.list(&mut commands, &mut read)?;
            }
            if !self.keyword("fi") {
                return None;
            }
            self.blanks();
            return (self.at == self.bytes.len())
                .then(|| Script::read_plainly(commands, Shape::Other("a compound command")));
        }
    }

    /// One list of an `if` statement up to its `;` and the blanks after it. A command or test
    /// that starts the list or follows `&&`/`||` may be negated (`if ! test -d x; …`):
    /// tree-sitter-bash reads a negated command around it and finds the same commands.
    fn list(&mut self, commands: &mut Vec<Command>, read: &mut usize) -> Option<()> {
        let mut pipes = 0usize;
        let mut negatable = true;
        loop {
            self.blanks();
            if negatable && self.keyword("!") {
                self.blanks();
            }
            if self.peek() == Some(b'[') {
                self.test()?;
            } else {
                let (command, redirected) = self.command()?;
                if redirected {
                    return None;
                }
                commands.push(command);
                commands.append(&mut self.substituted);
            }
            *read += 1;
            if *read > MAX_COMMANDS {
                return None;
            }
            self.blanks();
            negatable = false;
            match self.operator()? {
                Operator::Pipe => pipes += 1,
                // As in `parse`: tree-sitter-bash reads `a | b | c && d` as one pipeline.
                Operator::List if pipes >= 2 => return None,
                Operator::List => {
                    pipes = 0;
                    negatable = true;
                }
                Operator::Then => {
                    self.blanks();
                    return Some(());
                }
                Operator::End => return None,
            }
        }
    }
}
