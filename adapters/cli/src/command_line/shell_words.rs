//! Splitting a command line into words the way a POSIX shell would (quotes and backslashes),
//! without running a shell: no expansion, no globbing, no variables.

/// Splits `line` into words.
pub fn split(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unterminated single quote in --stdio".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("unterminated double quote in --stdio".into()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("unterminated double quote in --stdio".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') => {}
                    Some(c) => word.push(c),
                    None => return Err("a trailing backslash in --stdio".into()),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(split("npx -y pkg").unwrap(), ["npx", "-y", "pkg"]);
        assert_eq!(split("  a   b ").unwrap(), ["a", "b"]);
        assert_eq!(
            split("python3 'my server.py' --x").unwrap(),
            ["python3", "my server.py", "--x"]
        );
        assert_eq!(
            split(r#"a "b \"c\" \n" d"#).unwrap(),
            ["a", r#"b "c" \n"#, "d"]
        );
        assert_eq!(split(r"a\ b c").unwrap(), ["a b", "c"]);
        assert_eq!(split("''").unwrap(), [""]);
        assert_eq!(split("a'b'\"c\"").unwrap(), ["abc"]);
        assert_eq!(split("$HOME *").unwrap(), ["$HOME", "*"]);
        assert!(split("'open").is_err());
        assert!(split("\"open").is_err());
        assert!(split("end\\").is_err());
        assert_eq!(split("").unwrap(), Vec::<String>::new());
    }
}
