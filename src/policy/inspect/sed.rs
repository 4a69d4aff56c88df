//! `sed -n`'s own reader: a script made only of printing commands.

/// A sed script made only of printing commands: `;`-separated commands, each an optional
/// address or range (line numbers, `$`, `first~step`, `+N`, `/regex/` with `I`/`M`), an
/// optional `!`, and one of `p P = l q Q` (`l`, `q`, `Q` may take a number).
pub(super) fn sed_script(script: &str) -> Result<(), String> {
    let bad = |why: &str| {
        Err(format!(
            "`sed -n` with the script `{script}` is not read-only ({why}; only addresses with \
             p, =, l, q are)"
        ))
    };
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let skip_blanks = |i: &mut usize| {
        while chars.get(*i).is_some_and(|c| *c == ' ' || *c == '\t') {
            *i += 1;
        }
    };
    let mut commands = 0;
    loop {
        skip_blanks(&mut i);
        if i >= chars.len() {
            break;
        }
        if chars[i] == ';' {
            i += 1;
            continue;
        }
        // Address, then an optional second address.
        for second in [false, true] {
            if second {
                if chars.get(i) != Some(&',') {
                    break;
                }
                i += 1;
                if matches!(chars.get(i), Some('+' | '~')) {
                    i += 1;
                }
            }
            match chars.get(i) {
                Some(c) if c.is_ascii_digit() => {
                    while chars.get(i).is_some_and(char::is_ascii_digit) {
                        i += 1;
                    }
                    if chars.get(i) == Some(&'~') {
                        i += 1;
                        while chars.get(i).is_some_and(char::is_ascii_digit) {
                            i += 1;
                        }
                    }
                }
                Some('$') => i += 1,
                Some('/') => {
                    i += 1;
                    loop {
                        match chars.get(i) {
                            None | Some('\n') => return bad("an unclosed regex"),
                            Some('\\') => i += 2,
                            Some('/') => break,
                            Some(_) => i += 1,
                        }
                    }
                    i += 1;
                    while matches!(chars.get(i), Some('I' | 'M')) {
                        i += 1;
                    }
                }
                _ if second => return bad("a range without its end"),
                _ => {}
            }
        }
        skip_blanks(&mut i);
        if chars.get(i) == Some(&'!') {
            i += 1;
            skip_blanks(&mut i);
        }
        match chars.get(i) {
            Some('p' | 'P' | '=') => i += 1,
            Some('l' | 'q' | 'Q') => {
                i += 1;
                skip_blanks(&mut i);
                while chars.get(i).is_some_and(char::is_ascii_digit) {
                    i += 1;
                }
            }
            Some(c) => return bad(&format!("the command `{c}`")),
            None => return bad("an address without a command"),
        }
        commands += 1;
        skip_blanks(&mut i);
        match chars.get(i) {
            None => break,
            Some(';') => i += 1,
            Some(c) => return bad(&format!("`{c}` after a command")),
        }
    }
    if commands == 0 {
        return bad("no command");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn sed_scripts() {
        for ok in [
            "1p",
            "120,240p",
            "$p",
            "1~2p",
            "5,+3p",
            "/a/,/b/p",
            "/a\\/b/Ip",
            "10q",
            "=",
            "1,5!p",
            "1p;3p",
            " 2 p ; $= ",
            "l",
            "l 5",
        ] {
            assert_eq!(sed_script(ok), Ok(()), "{ok:?}");
        }
        for bad in [
            "",
            "1w x",
            "1,3d",
            "s/a/b/",
            "s/a/b/w x",
            "1r /etc/passwd",
            "e date",
            "1p;w x",
            "1{p}",
            "/a",
            "1,p",
            "1pp",
            "R x",
            "W x",
        ] {
            assert!(sed_script(bad).is_err(), "{bad:?}");
        }
    }
}
