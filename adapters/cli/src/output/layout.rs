//! Text laid out for people: aligned columns, and text cut to a width.

/// Prints rows as columns, each as wide as its widest cell; the last column is not padded.
/// No rows: `(none)`.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) {
    if rows.is_empty() {
        outln!("(none)");
        return;
    }
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let last = cells.len() - 1;
        let mut out = String::new();
        for (i, cell) in cells.into_iter().enumerate() {
            match i == last {
                true => out.push_str(cell),
                false => out.push_str(&format!("{cell:w$}  ", w = widths[i])),
            }
        }
        outln!("{}", out.trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}

/// The first line of a text, cut at 80 characters.
pub(crate) fn first_line(text: Option<&str>) -> String {
    truncate(text.unwrap_or("").lines().next().unwrap_or(""), 80)
}

/// `s` cut to `max` characters, an ellipsis ending what was cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let cut: String = s.chars().take(max - 1).collect();
    format!("{cut}…")
}
