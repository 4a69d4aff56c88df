//! The model's Markdown made readable on a terminal, a line at a time so it can
//! stream: headings bold (underlined at level 1), list bullets as `•`, code
//! blocks coloured between dimmed fences and never indented (a copied block is
//! the code as written), block quotes barred, rules drawn, and inline `code`,
//! **strong** and *emphasis* styled (their markers dropped). Without colour only
//! what reads better anyway changes (bullets, quotes, rules); markers stay. Everything is sanitised first
//! ([`super::sanitize::escape_prose`]), so styling never lets a model's escape
//! sequence through. Text for a file or a pipe is never rendered (the callers
//! decide).

use crossterm::style::Stylize as _;

use super::sanitize;

/// What a line depends on from the lines before it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Markdown {
    /// Inside a fenced code block, with its fence (```` ``` ```` or `~~~`).
    fence: Option<String>,
    /// Use colour and text attributes.
    color: bool,
}

impl Markdown {
    /// A renderer at the start of a text.
    #[must_use]
    pub fn new(color: bool) -> Self {
        Self { fence: None, color }
    }

    /// One line (without its newline), rendered.
    pub fn line(&mut self, line: &str) -> String {
        let line = sanitize::escape_prose(line);
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        if let Some(fence) = &self.fence {
            let closing = trimmed.trim_end();
            if closing.len() >= fence.len() && closing.chars().all(|c| fence.starts_with(c)) {
                self.fence = None;
                return self.dim(&format!("{indent}{trimmed}"));
            }
            // As written, never indented: a copied block is the code, nothing added.
            return self.paint_code(&line);
        }
        for fence in ["```", "~~~"] {
            if trimmed.starts_with(fence) {
                self.fence = Some(fence.to_owned());
                return self.dim(&format!("{indent}{trimmed}"));
            }
        }
        if let Some((level, title)) = heading(trimmed) {
            if !self.color {
                return line.into_owned();
            }
            let title = self.inline(title);
            return if level == 1 {
                title.bold().underlined().to_string()
            } else {
                title.bold().to_string()
            };
        }
        if is_rule(trimmed) {
            return self.dim(&"─".repeat(40));
        }
        let quoted = trimmed
            .strip_prefix("> ")
            .or_else(|| trimmed.strip_prefix('>').filter(|rest| rest.is_empty()));
        if let Some(rest) = quoted {
            return format!("{indent}{} {}", self.dim("│"), self.inline(rest));
        }
        for bullet in ["- ", "* ", "+ "] {
            if let Some(rest) = trimmed.strip_prefix(bullet) {
                return format!("{indent}• {}", self.inline(rest));
            }
        }
        format!("{indent}{}", self.inline(trimmed))
    }

    /// The rest of a line whose head was already shown (a long line cut to stream): inline
    /// styles only (or a code block's colour), no block Markdown.
    pub fn continuation(&mut self, text: &str) -> String {
        let text = sanitize::escape_prose(text);
        if self.fence.is_some() {
            self.paint_code(&text)
        } else {
            self.inline(&text)
        }
    }

    /// Inline code, strong and emphasis, when colour is on.
    fn inline(&self, text: &str) -> String {
        if !self.color {
            return text.to_owned();
        }
        let chars: Vec<char> = text.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '`'
                && let Some(end) = find(&chars, i + 1, "`")
            {
                let code: String = chars[i + 1..end].iter().collect();
                out.push_str(&self.paint_code(&code));
                i = end + 1;
                continue;
            }
            let strong = ["**", "__"].into_iter().find_map(|marker| {
                let end = find(&chars, i + 2, marker)?;
                (starts(&chars, i, marker) && opens(&chars, i + 2) && end > i + 2).then_some(end)
            });
            if let Some(end) = strong {
                let inner: String = chars[i + 2..end].iter().collect();
                out.push_str(&self.inline(&inner).bold().to_string());
                i = end + 2;
                continue;
            }
            if (c == '*' || (c == '_' && (i == 0 || !chars[i - 1].is_alphanumeric())))
                && opens(&chars, i + 1)
                && let Some(end) = find(&chars, i + 1, if c == '*' { "*" } else { "_" })
                && end > i + 1
                && (c == '*'
                    || chars
                        .get(end + 1)
                        .is_none_or(|next| !next.is_alphanumeric()))
            {
                let inner: String = chars[i + 1..end].iter().collect();
                out.push_str(&self.inline(&inner).italic().to_string());
                i = end + 1;
                continue;
            }
            out.push(c);
            i += 1;
        }
        out
    }

    fn paint_code(&self, text: &str) -> String {
        if self.color {
            text.cyan().to_string()
        } else {
            text.to_owned()
        }
    }

    fn dim(&self, text: &str) -> String {
        if self.color {
            text.dim().to_string()
        } else {
            text.to_owned()
        }
    }
}

/// A whole text, rendered line by line.
#[must_use]
pub fn render(text: &str, color: bool) -> String {
    let mut markdown = Markdown::new(color);
    text.split('\n')
        .map(|line| markdown.line(line))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `## Title` → (2, "Title").
fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|c| *c == '#').count();
    let rest = &line[level..];
    ((1..=6).contains(&level) && (rest.is_empty() || rest.starts_with(' ')))
        .then(|| (level, rest.trim()))
}

/// `---`, `***`, `___` (three or more, spaces allowed).
fn is_rule(line: &str) -> bool {
    let marks: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    marks.len() >= 3
        && ['-', '*', '_']
            .iter()
            .any(|mark| marks.chars().all(|c| c == *mark))
}

fn starts(chars: &[char], at: usize, marker: &str) -> bool {
    marker
        .chars()
        .enumerate()
        .all(|(k, m)| chars.get(at + k) == Some(&m))
}

/// An emphasis marker opens only before a non-blank character.
fn opens(chars: &[char], at: usize) -> bool {
    chars.get(at).is_some_and(|c| !c.is_whitespace())
}

/// The index of the next `marker` at or after `from`, not after a blank.
fn find(chars: &[char], from: usize, marker: &str) -> Option<usize> {
    (from..chars.len())
        .find(|&at| starts(chars, at, marker) && (marker == "`" || !chars[at - 1].is_whitespace()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn without_colour_only_layout_changes() {
        let text =
            "# Plan\n- one `x`\n* two **b**\n> quoted\n---\n```rust\nlet a = 1;\n```\n1. first";
        assert_eq!(
            render(text, false),
            format!(
                "# Plan\n• one `x`\n• two **b**\n│ quoted\n{}\n```rust\nlet a = 1;\n```\n1. first",
                "─".repeat(40)
            )
        );
    }

    #[test]
    fn with_colour_markers_become_styles() {
        let shown = render(
            "## Steps\nrun `cargo test` **now**, *please*; snake_case_name",
            true,
        );
        assert!(shown.contains(&"Steps".bold().to_string()), "{shown:?}");
        assert!(!shown.contains("##"), "{shown:?}");
        assert!(
            shown.contains(&"cargo test".cyan().to_string()),
            "{shown:?}"
        );
        assert!(shown.contains(&"now".bold().to_string()), "{shown:?}");
        assert!(shown.contains(&"please".italic().to_string()), "{shown:?}");
        assert!(shown.contains("snake_case_name"), "{shown:?}");
    }

    /// Whatever a code block holds, it is shown as written (no indent added), so copying it
    /// from the terminal gives the code back.
    #[test]
    fn a_code_block_is_shown_as_written() {
        let lines = [
            "fn main() {",
            "    println!(\"hi\");",
            "\tlet tab = 1;",
            "",
            "# comment",
            "- not a list",
            "}",
        ];
        for fence in ["```", "~~~", "```rust", "  ```"] {
            let close = fence.trim().trim_end_matches("rust");
            let text = format!("{fence}\n{}\n{close}", lines.join("\n"));
            let shown = render(&text, false);
            let inside: Vec<&str> = shown.lines().skip(1).take(lines.len()).collect();
            assert_eq!(inside, lines, "{fence}: {shown:?}");
        }
    }

    #[test]
    fn code_blocks_are_not_styled_inside() {
        let shown = render("```\n# not a heading\n**x**\n```\nafter", true);
        assert!(
            shown.contains(&"# not a heading".cyan().to_string()),
            "{shown:?}"
        );
        assert!(shown.contains(&"**x**".cyan().to_string()), "{shown:?}");
        assert!(shown.ends_with("after"), "{shown:?}");
    }

    #[test]
    fn escape_sequences_stay_escaped() {
        let shown = render("# t\u{1b}]0;x\u{7}\n**\u{1b}[2J**", true);
        assert!(!shown.contains("\u{1b}]"), "{shown:?}");
        assert!(!shown.contains("\u{1b}[2J"), "{shown:?}");
        assert!(shown.contains("\\u{1b}]0;x\\u{7}"), "{shown:?}");
    }
}
