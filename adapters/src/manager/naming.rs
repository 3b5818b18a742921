//! One namespace for the host: each server's tools under one legal, collision-free name.
//!
//! [`qualify`] names every `(server, tool)` pair as `server__tool` (the separator is
//! configurable), made legal by the specification's rules for tool names: 1 to 128 characters,
//! only ASCII letters, digits, `_`, `-` and `.`. Names that had to change are reported as
//! [`NamingNote`]s. [`resolve`] finds a tool again from what a user typed.

use std::collections::HashSet;

/// The specification's longest tool name.
const SPEC_MAX_LEN: usize = 128;

/// The shortest `max_len` honoured: room for a few characters and the hash of a long name.
const MIN_LEN: usize = 16;

/// The hash appended to a shortened name: `_` and 8 hex digits.
const HASH_LEN: usize = 9;

/// How qualified names are formed (default: `server__tool`, at most 128 characters).
///
/// `#[non_exhaustive]`: build one from the default, field by field:
///
/// ```
/// let mut naming = mcpwire::manager::naming::NamingPolicy::default();
/// naming.separator = "-".into();
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NamingPolicy {
    /// Between the server's name and the tool's (`__`); characters outside the legal set
    /// become `_`.
    pub separator: String,
    /// The longest name (128, the specification's limit; clamped to `16..=128`).
    pub max_len: usize,
}

impl Default for NamingPolicy {
    fn default() -> Self {
        NamingPolicy {
            separator: "__".to_owned(),
            max_len: SPEC_MAX_LEN,
        }
    }
}

/// One tool under its qualified name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Qualified {
    /// The name the host sees: legal, unique within one [`qualify`] result.
    pub qualified: String,
    /// The server's name, as configured.
    pub server: String,
    /// The tool's name, as the server sent it.
    pub tool: String,
}

/// A name that had to change, and why (reported to the host).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NamingNote {
    /// Characters outside the legal set were replaced, or the name was shortened.
    Rewritten {
        /// The server's name.
        server: String,
        /// The tool's name.
        tool: String,
        /// The name given.
        qualified: String,
    },
    /// Two tools would have had the same name; this one got a suffix.
    Collision {
        /// The server's name.
        server: String,
        /// The tool's name.
        tool: String,
        /// The name given.
        qualified: String,
        /// The name it would have had, which another tool holds.
        with: String,
    },
}

/// Names every `(server, tool)` pair.
///
/// - Deterministic: the same input in any order gives the same names. The result is sorted by
///   server, then tool; a pair given twice is named once.
/// - Legal: only `[A-Za-z0-9_.-]`, 1 to `max_len` characters. Other characters become `_`
///   (one per character); a name too long is cut and `_` and a stable 8-digit hash of the full
///   pair appended, so distinct long names stay distinct; empty names still give a legal name.
/// - Unique: when several pairs would have one name, it goes to the first in sorted order
///   whose name needed no rewriting (else the first); the others get `_2`, `_3`, … in sorted
///   order (cut to fit `max_len`), never a name another pair has without a suffix.
pub fn qualify(
    policy: &NamingPolicy,
    tools: &[(String, String)],
) -> (Vec<Qualified>, Vec<NamingNote>) {
    let max_len = policy.max_len.clamp(MIN_LEN, SPEC_MAX_LEN);
    let separator = sanitize(&policy.separator);

    let mut pairs: Vec<&(String, String)> = tools.iter().collect();
    pairs.sort();
    pairs.dedup();

    // The name each would have without collisions, and whether it was rewritten.
    let bases: Vec<(String, bool)> = pairs
        .iter()
        .map(|(server, tool)| base_name(server, tool, &separator, max_len))
        .collect();

    // Every base name is reserved for one pair: the first, in sorted order, among those whose
    // name needed no rewriting, else the first of the others. The rest with that base get the
    // first free suffix.
    let mut taken: HashSet<String> = bases.iter().map(|(name, _)| name.clone()).collect();
    let mut claimed: HashSet<&str> = HashSet::new();
    let mut suffixed: Vec<Option<String>> = vec![None; bases.len()];
    let mut order: Vec<usize> = (0..bases.len()).collect();
    order.sort_by_key(|&i| (bases[i].1, i));
    for i in order {
        let base = &bases[i].0;
        if !claimed.insert(base) {
            let name = with_suffix(base, max_len, &taken);
            taken.insert(name.clone());
            suffixed[i] = Some(name);
        }
    }

    let mut names = Vec::with_capacity(pairs.len());
    let mut notes = Vec::new();
    for (((server, tool), (base, rewritten)), suffix) in
        pairs.into_iter().zip(&bases).zip(&suffixed)
    {
        let qualified = suffix.clone().unwrap_or_else(|| base.clone());
        if *rewritten {
            notes.push(NamingNote::Rewritten {
                server: server.clone(),
                tool: tool.clone(),
                qualified: qualified.clone(),
            });
        }
        if suffix.is_some() {
            notes.push(NamingNote::Collision {
                server: server.clone(),
                tool: tool.clone(),
                qualified: qualified.clone(),
                with: base.clone(),
            });
        }
        names.push(Qualified {
            qualified,
            server: server.clone(),
            tool: tool.clone(),
        });
    }
    (names, notes)
}

/// Finds the tool a user typed: the exact qualified name first, then `server/tool` (split at
/// any `/`, the first that matches wins). `None` when nothing matches.
pub fn resolve<'a>(names: &'a [Qualified], typed: &str) -> Option<&'a Qualified> {
    if let Some(found) = names.iter().find(|q| q.qualified == typed) {
        return Some(found);
    }
    typed.match_indices('/').find_map(|(at, _)| {
        let (server, tool) = (&typed[..at], &typed[at + 1..]);
        names.iter().find(|q| q.server == server && q.tool == tool)
    })
}

/// The server a typed tool name begins with, among `servers`: `server/…`, or the start of the
/// server's qualified names (`server__…`, with the server's name made legal as [`qualify`]
/// makes it). The longest such name wins; `None` when the name begins with none of them.
/// A host that runs servers on demand starts only that one.
pub fn server_of<'a>(policy: &NamingPolicy, servers: &[&'a str], typed: &str) -> Option<&'a str> {
    let separator = sanitize(&policy.separator);
    servers
        .iter()
        .copied()
        .filter(|server| {
            let slash = typed.len() > server.len() + 1
                && typed.starts_with(server)
                && typed[server.len()..].starts_with('/');
            let prefix = format!("{}{separator}", sanitize(server));
            slash || (typed.len() > prefix.len() && typed.starts_with(&prefix))
        })
        .max_by_key(|server| server.len())
}

/// Whether the tools `tools` of server `server` get their plain names (`server`, the separator,
/// the tool) in any namespace whose other servers are `others`, and leave every other pair's
/// name as it is, so that [`qualify`] finds nothing to report for them: `server` and each tool
/// name are legal and short enough, `server` holds no separator, and no other server's name,
/// made legal, is `server` or begins with `server` and the separator. A name not plain may
/// still need no note; the check is cheap (no other server's tools are read), not exact.
///
/// Why this suffices: a plain name `s + sep + t` can only equal another pair's name when that
/// pair's server, made legal, is `s` or begins with `s + sep` (or `s` holds `sep`, or the name
/// is cut and hashed at `max_len`, which only a name of that length can equal). What it cannot
/// see is a suffix (`_2`) another collision already needs; the caller checks that there is no
/// collision anywhere.
pub(super) fn plain_server<'a>(
    policy: &NamingPolicy,
    server: &str,
    mut tools: impl Iterator<Item = &'a str>,
    mut others: impl Iterator<Item = &'a str>,
) -> bool {
    let max_len = policy.max_len.clamp(MIN_LEN, SPEC_MAX_LEN);
    let separator = sanitize(&policy.separator);
    let legal = |name: &str| name.chars().all(is_legal);
    if server.is_empty()
        || !legal(server)
        || (!separator.is_empty() && server.contains(&*separator))
    {
        return false;
    }
    let room = max_len.saturating_sub(server.len() + separator.len());
    if !tools.all(|t| !t.is_empty() && t.len() < room && legal(t)) {
        return false;
    }
    others.all(|other| {
        let other = match legal(other) {
            true => std::borrow::Cow::Borrowed(other),
            false => std::borrow::Cow::Owned(sanitize(other)),
        };
        other != server
            && !(other.len() > server.len()
                && other.starts_with(server)
                && other[server.len()..].starts_with(&*separator))
    })
}

/// Whether server `server`'s name is plain: not empty, legal, without the separator. When every
/// server's name is, no other server's name can make a plain pair's name change (the other half
/// of [`plain_server`]'s check).
pub(super) fn plain_server_name(policy: &NamingPolicy, server: &str) -> bool {
    let separator = sanitize(&policy.separator);
    !server.is_empty()
        && server.chars().all(is_legal)
        && (separator.is_empty() || !server.contains(&*separator))
}

/// The separator as names hold it (made legal).
pub(super) fn separator(policy: &NamingPolicy) -> String {
    sanitize(&policy.separator)
}

/// FNV-1a over a sequence of names (each followed by 0xff, which UTF-8 never holds).
#[derive(Debug, Clone, Copy)]
pub(super) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Adds one name.
    pub(super) fn write(&mut self, bytes: &[u8]) {
        self.0 = fnv1a_from(self.0, bytes.iter().copied().chain([0xff]));
    }

    /// The hash so far.
    pub(super) fn finish(self) -> u64 {
        self.0
    }
}

/// `name` with every character outside `[A-Za-z0-9_.-]` replaced by `_`.
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| if is_legal(c) { c } else { '_' })
        .collect()
}

/// Whether `c` may appear in a tool name.
fn is_legal(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// The legal name of `(server, tool)` before collisions, and whether it differs from the plain
/// `server + separator + tool`.
fn base_name(server: &str, tool: &str, separator: &str, max_len: usize) -> (String, bool) {
    let (s, t) = (sanitize(server), sanitize(tool));
    let mut rewritten = s != server || t != tool;
    let mut name = format!("{s}{separator}{t}");
    if name.is_empty() {
        name.push('_');
        rewritten = true;
    }
    if name.len() > max_len {
        // ASCII only by now: any byte index is a character boundary.
        name.truncate(max_len - HASH_LEN);
        name.push('_');
        name.push_str(&short_hash(server, tool));
        rewritten = true;
    }
    (name, rewritten)
}

/// `base` with the first suffix `_2`, `_3`, … that gives a name not in `taken`, cut to fit
/// `max_len`.
fn with_suffix(base: &str, max_len: usize, taken: &HashSet<String>) -> String {
    (2u64..)
        .map(|k| {
            let suffix = format!("_{k}");
            let keep = base.len().min(max_len - suffix.len());
            format!("{}{suffix}", &base[..keep])
        })
        .find(|name| !taken.contains(name))
        .expect("a free suffix among unboundedly many")
}

/// A stable 8-hex-digit hash of the pair: FNV-1a 64, folded to 32 bits.
fn short_hash(server: &str, tool: &str) -> String {
    // 0xff never occurs in UTF-8, so it separates the two names unambiguously.
    let hash = fnv1a(server.bytes().chain([0xff]).chain(tool.bytes()));
    format!("{:08x}", (hash ^ (hash >> 32)) as u32)
}

/// FNV-1a, 64 bits.
fn fnv1a(bytes: impl Iterator<Item = u8>) -> u64 {
    fnv1a_from(0xcbf2_9ce4_8422_2325, bytes)
}

/// FNV-1a, 64 bits, from state `h`.
fn fnv1a_from(h: u64, bytes: impl Iterator<Item = u8>) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.fold(h, |h, b| (h ^ u64::from(b)).wrapping_mul(PRIME))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|&(s, t)| (s.to_owned(), t.to_owned()))
            .collect()
    }

    fn names(list: &[(&str, &str)]) -> (Vec<Qualified>, Vec<NamingNote>) {
        qualify(&NamingPolicy::default(), &pairs(list))
    }

    fn just_names(q: &[Qualified]) -> Vec<&str> {
        q.iter().map(|q| q.qualified.as_str()).collect()
    }

    fn is_legal_name(name: &str, max_len: usize) -> bool {
        (1..=max_len).contains(&name.len()) && name.chars().all(is_legal)
    }

    #[test]
    fn the_server_a_typed_name_begins_with() {
        let policy = NamingPolicy::default();
        let servers = ["git", "github", "my server", "a__b"];
        let of = |typed: &str| server_of(&policy, &servers, typed);
        assert_eq!(of("github__search"), Some("github"));
        assert_eq!(of("git__log"), Some("git"));
        assert_eq!(of("github/search"), Some("github"));
        assert_eq!(of("my_server__x"), Some("my server"));
        assert_eq!(of("my server/x"), Some("my server"));
        // The longest name that fits.
        assert_eq!(of("a__b__c"), Some("a__b"));
        // A name alone, a server with nothing after it, another server.
        assert_eq!(of("search"), None);
        assert_eq!(of("github__"), None);
        assert_eq!(of("nope__x"), None);
    }

    #[test]
    fn a_plain_server_needs_no_note_whatever_the_others() {
        let policy = NamingPolicy::default();
        let plain = |server: &str, tools: &[&str], others: &[&str]| {
            plain_server(
                &policy,
                server,
                tools.iter().copied(),
                others.iter().copied(),
            )
        };
        assert!(plain("github", &["search", "get-issue.v2"], &["fs", "git"]));
        // The server's name or a tool's is not legal, or too long.
        assert!(!plain("my server", &["x"], &[]));
        assert!(!plain("github", &["get weather"], &[]));
        assert!(!plain("github", &[&"x".repeat(120)], &[]));
        assert!(!plain("", &["x"], &[]));
        assert!(!plain("github", &[""], &[]));
        // The separator in its name, or another server that could give the same names.
        assert!(!plain("a__b", &["c"], &["a"]));
        assert!(!plain("a", &["b__c"], &["a__b"]));
        assert!(!plain("a_b", &["x"], &["a b"]));
        assert!(plain("a", &["x"], &["ab", "b", "a_"]));
        // Checked against `qualify`: a plain server's names are its own, and no note at all
        // when the others have none.
        type Case<'a> = (&'a str, &'a [&'a str], &'a [(&'a str, &'a str)]);
        let cases: &[Case] = &[
            (
                "a",
                &["x", "y_2"],
                &[("a_", "_x"), ("ab", "x"), ("b", "a__x")],
            ),
            ("s1", &["echo"], &[("s10", "echo"), ("s", "1__echo")]),
        ];
        for (server, tools, others) in cases {
            let names: Vec<&str> = others.iter().map(|(s, _)| *s).collect();
            assert!(plain(server, tools, &names), "{server}");
            let mut all = pairs(others);
            all.extend(tools.iter().map(|t| (server.to_string(), t.to_string())));
            let (q, notes) = qualify(&policy, &all);
            for t in tools.iter() {
                let mine = q
                    .iter()
                    .find(|q| q.server == *server && q.tool == *t)
                    .unwrap();
                assert_eq!(mine.qualified, format!("{server}__{t}"));
            }
            assert!(notes.is_empty(), "{notes:?}");
        }
    }

    #[test]
    fn plain_names_are_joined() {
        let (q, notes) = names(&[("github", "create_issue"), ("fs", "read-file.v2")]);
        assert_eq!(just_names(&q), ["fs__read-file.v2", "github__create_issue"]);
        assert_eq!(
            q[1],
            Qualified {
                qualified: "github__create_issue".into(),
                server: "github".into(),
                tool: "create_issue".into(),
            }
        );
        assert!(notes.is_empty());
    }

    #[test]
    fn illegal_characters_become_underscores() {
        let (q, notes) = names(&[("my server", "get weather!"), ("café", "naïve/tool")]);
        assert_eq!(
            just_names(&q),
            ["caf___na_ve_tool", "my_server__get_weather_"]
        );
        assert_eq!(
            notes,
            [
                NamingNote::Rewritten {
                    server: "café".into(),
                    tool: "naïve/tool".into(),
                    qualified: "caf___na_ve_tool".into(),
                },
                NamingNote::Rewritten {
                    server: "my server".into(),
                    tool: "get weather!".into(),
                    qualified: "my_server__get_weather_".into(),
                },
            ]
        );
    }

    #[test]
    fn long_names_are_cut_and_stay_distinct() {
        let prefix = "x".repeat(150);
        let a = format!("{prefix}a");
        let b = format!("{prefix}b");
        let (q, notes) = names(&[("srv", &a), ("srv", &b)]);
        assert_eq!(q.len(), 2);
        assert_ne!(q[0].qualified, q[1].qualified);
        for n in &q {
            assert_eq!(n.qualified.len(), 128);
            assert!(is_legal_name(&n.qualified, 128));
            assert!(n.qualified.starts_with("srv__xxx"));
            assert_eq!(&n.qualified[119..120], "_");
        }
        assert_eq!(notes.len(), 2);
        assert!(notes
            .iter()
            .all(|n| matches!(n, NamingNote::Rewritten { .. })));
        // Stable across runs and builds.
        assert_eq!(q, names(&[("srv", &b), ("srv", &a)]).0);
        assert_eq!(short_hash("srv", "tool"), short_hash("srv", "tool"));
        assert_ne!(short_hash("srv", "tool"), short_hash("srvt", "ool"));
        assert_eq!(fnv1a("a".bytes()), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a("foobar".bytes()), 0x8594_4171_f739_67e8);
        // Exactly at the limit: kept as is.
        let fits = "t".repeat(128 - 5);
        let (q, notes) = names(&[("srv", &fits)]);
        assert_eq!(q[0].qualified, format!("srv__{fits}"));
        assert!(notes.is_empty());
    }

    #[test]
    fn collisions_are_resolved_in_sorted_order() {
        let input = [("a", "b__c"), ("a__b", "c"), ("a_", "_b__c")];
        let (q, notes) = names(&input);
        assert_eq!(just_names(&q), ["a__b__c", "a____b__c", "a__b__c_2"]);
        assert_eq!(q[2].server, "a__b");
        assert_eq!(
            notes,
            [NamingNote::Collision {
                server: "a__b".into(),
                tool: "c".into(),
                qualified: "a__b__c_2".into(),
                with: "a__b__c".into(),
            }]
        );
        // Any order gives the same.
        let mut reversed = input;
        reversed.reverse();
        assert_eq!(names(&reversed), (q.clone(), notes.clone()));
        let rotated = [input[1], input[2], input[0]];
        assert_eq!(names(&rotated), (q, notes));
    }

    #[test]
    fn a_plain_name_wins_over_a_rewritten_one_and_suffixes_skip_held_names() {
        // `b c` sorts before `b_c` but was rewritten: `b_c` keeps its name, and the suffix
        // skips `_2`, which a tool has as its own name.
        let (q, notes) = names(&[("a", "b c"), ("a", "b_c"), ("a", "b_c_2")]);
        let got: Vec<(&str, &str)> = q
            .iter()
            .map(|q| (q.tool.as_str(), q.qualified.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("b c", "a__b_c_3"),
                ("b_c", "a__b_c"),
                ("b_c_2", "a__b_c_2")
            ]
        );
        assert_eq!(
            notes,
            [
                NamingNote::Rewritten {
                    server: "a".into(),
                    tool: "b c".into(),
                    qualified: "a__b_c_3".into(),
                },
                NamingNote::Collision {
                    server: "a".into(),
                    tool: "b c".into(),
                    qualified: "a__b_c_3".into(),
                    with: "a__b_c".into(),
                },
            ]
        );
    }

    #[test]
    fn suffixes_fit_the_limit() {
        let tool = "t".repeat(128 - 5);
        let (q, notes) = names(&[("s", &format!("__{tool}")), ("s__", &tool)]);
        assert_eq!(q[0].qualified.len(), 128);
        assert_eq!(q[1].qualified.len(), 128);
        assert!(q[1].qualified.ends_with("t_2"));
        assert_eq!(notes.len(), 1);
    }

    #[test]
    fn duplicates_are_named_once() {
        let (q, notes) = names(&[("s", "t"), ("s", "t")]);
        assert_eq!(just_names(&q), ["s__t"]);
        assert!(notes.is_empty());
    }

    #[test]
    fn empty_names_still_give_legal_names() {
        let (q, _) = names(&[("", ""), ("", "tool"), ("srv", "")]);
        assert_eq!(just_names(&q), ["__", "__tool", "srv__"]);
        let bare = NamingPolicy {
            separator: String::new(),
            ..NamingPolicy::default()
        };
        let (q, notes) = qualify(&bare, &pairs(&[("", ""), ("a", "b"), ("ab", "")]));
        assert_eq!(just_names(&q), ["_", "ab", "ab_2"]);
        assert_eq!(notes.len(), 2);
    }

    #[test]
    fn the_policy_is_applied_legally() {
        let slash = NamingPolicy {
            separator: "/".into(),
            ..NamingPolicy::default()
        };
        let (q, notes) = qualify(&slash, &pairs(&[("s", "t")]));
        assert_eq!(just_names(&q), ["s_t"]);
        assert!(
            notes.is_empty(),
            "the separator is the policy's, not reported"
        );
        let dot = NamingPolicy {
            separator: ".".into(),
            max_len: 0,
        };
        let long = "y".repeat(40);
        let (q, _) = qualify(&dot, &pairs(&[("s", "t"), ("s", &long)]));
        assert_eq!(q[0].qualified, "s.t");
        assert_eq!(q[1].qualified.len(), 16);
        let huge = NamingPolicy {
            max_len: 1000,
            ..NamingPolicy::default()
        };
        let (q, _) = qualify(&huge, &pairs(&[("s", &"z".repeat(300))]));
        assert_eq!(q[0].qualified.len(), 128);
    }

    #[test]
    fn typed_names_resolve() {
        let (q, _) = names(&[
            ("github", "create_issue"),
            ("my server", "x"),
            ("a/b", "c"),
            ("a", "b/c"),
        ]);
        let found = |typed: &str| resolve(&q, typed).map(|q| (q.server.as_str(), q.tool.as_str()));
        assert_eq!(
            found("github__create_issue"),
            Some(("github", "create_issue"))
        );
        assert_eq!(
            found("github/create_issue"),
            Some(("github", "create_issue"))
        );
        assert_eq!(found("my_server__x"), Some(("my server", "x")));
        assert_eq!(found("my server/x"), Some(("my server", "x")));
        // Split at the first `/` that matches.
        assert_eq!(found("a/b/c"), Some(("a", "b/c")));
        assert_eq!(found("github"), None);
        assert_eq!(found("github/"), None);
        assert_eq!(found("github/nope"), None);
        assert_eq!(found(""), None);
        assert_eq!(resolve(&[], "a/b"), None);
    }

    /// A name: often from a tiny alphabet (to collide), sometimes anything, sometimes long.
    fn name() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            4 => "[ab_ ]{0,5}",
            2 => "\\PC{0,20}",
            1 => "[a-z]{60,140}",
        ]
    }

    proptest::proptest! {
        #[test]
        fn names_are_legal_unique_and_order_free(
            list in proptest::collection::vec((name(), name()), 0..40),
            max_len in proptest::prop_oneof![proptest::strategy::Just(128usize), 0usize..200],
        ) {
            let policy = NamingPolicy { max_len, ..NamingPolicy::default() };
            let limit = max_len.clamp(MIN_LEN, SPEC_MAX_LEN);
            let (q, notes) = qualify(&policy, &list);

            let mut distinct = list.clone();
            distinct.sort();
            distinct.dedup();
            proptest::prop_assert_eq!(q.len(), distinct.len());
            let mut seen = HashSet::new();
            for (n, (server, tool)) in q.iter().zip(&distinct) {
                proptest::prop_assert!(is_legal_name(&n.qualified, limit), "{:?}", n);
                proptest::prop_assert!(seen.insert(n.qualified.clone()), "twice: {:?}", n);
                proptest::prop_assert_eq!((&n.server, &n.tool), (server, tool));
                proptest::prop_assert_eq!(resolve(&q, &n.qualified), Some(n));
                let noted = notes.iter().any(|note| match note {
                    NamingNote::Rewritten { qualified, .. }
                    | NamingNote::Collision { qualified, .. } => *qualified == n.qualified,
                });
                if !noted {
                    proptest::prop_assert_eq!(&n.qualified, &format!("{server}__{tool}"));
                }
            }

            let mut reversed = list.clone();
            reversed.reverse();
            proptest::prop_assert_eq!(qualify(&policy, &reversed), (q, notes));
        }
    }
}
