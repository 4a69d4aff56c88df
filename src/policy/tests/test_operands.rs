//! The plain test shapes (`[ WORD OP WORD ]`, `[ -X WORD ]`) that the fast lexer reads itself:
//! whatever their operands hold, it reads what tree-sitter reads or leaves the text to it.

use crate::policy::{lex, parse};

/// Every ASCII punctuation character, alone or with a digit or letter before or after it, in
/// each operand of the plain test shapes: the lexer reads what tree-sitter reads or leaves the
/// text to it (`[ 1% = x ]`: tree-sitter-bash reads `%` as arithmetic inside a test).
#[test]
fn test_operands_with_any_punctuation_read_alike() {
    let mut differ = Vec::new();
    for c in (b'!'..=b'~')
        .map(char::from)
        .filter(char::is_ascii_punctuation)
    {
        for operand in [
            format!("{c}"),
            format!("1{c}"),
            format!("a{c}"),
            format!("{c}1"),
            format!("{c}a"),
            format!("a{c}b"),
        ] {
            for text in [
                format!("[ {operand} = x ]"),
                format!("[ x = {operand} ]"),
                format!("[ -f {operand} ]"),
                format!("[[ -f {operand} ]]"),
                format!("[ {operand} != x ]"),
            ] {
                if let Some(fast) = lex::parse(&text)
                    && fast != parse::parse_slow(&text)
                {
                    differ.push(text);
                }
            }
        }
    }
    assert!(differ.is_empty(), "read differently: {differ:?}");
}
