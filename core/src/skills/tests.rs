//! Skill entries, the frontmatter reader and (with the `skills` feature) the verification of a
//! skill's reads: a correct skill, and each kind of mismatch.

use serde_json::{json, Value};

use super::frontmatter::{parse, split};
use super::*;

fn fm(text: &str) -> Value {
    Value::Object(parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}")))
}

fn fm_err(text: &str) -> String {
    parse(text).expect_err(text).to_string()
}

#[test]
fn splits_the_block_from_the_body() {
    let text = "---\nname: a\n---\nbody\n";
    assert_eq!(split(text), Some(("name: a", "body\n")));
    // A byte-order mark, CRLF lines, blanks after the closing dashes, no body.
    let text = "\u{feff}---\r\nname: a\r\n--- \t\r\n";
    assert_eq!(split(text), Some(("name: a", "")));
    assert_eq!(split("---\nname: a\n---"), Some(("name: a", "")));
    // No opening line, or no closing one.
    assert_eq!(split("name: a\n---\n"), None);
    assert_eq!(split(" ---\nname: a\n---\n"), None);
    assert_eq!(split("---\nname: a\n"), None);
    // A `----` line or `--- x` does not close it.
    assert_eq!(
        split("---\na: 1\n----\n--- x\n---\nb"),
        Some(("a: 1\n----\n--- x", "b"))
    );
}

#[test]
fn reads_scalars_with_core_schema_types() {
    let v = fm("name: pdf\n\
                n: 42\n\
                neg: -7\n\
                hex: 0x1F\n\
                f: 2.5\n\
                e: 1e3\n\
                version: 1.0.0\n\
                yes: true\n\
                no: False\n\
                nothing: ~\n\
                empty:\n\
                date: 2024-01-01\n\
                url: https://example.com/a#b\n\
                commented: value # a comment\n\
                hash: a#b");
    assert_eq!(
        v,
        json!({"name": "pdf", "n": 42, "neg": -7, "hex": 31, "f": 2.5, "e": 1000.0,
               "version": "1.0.0", "yes": true, "no": false, "nothing": null, "empty": null,
               "date": "2024-01-01", "url": "https://example.com/a#b",
               "commented": "value", "hash": "a#b"})
    );
}

#[test]
fn reads_quoted_scalars() {
    let v = fm(r#"a: "Say \"hi\"\tthen \u00e9"
b: 'it''s # not a comment'
c: "true"
d: '42'
"quoted key": x
'other key': y"#);
    assert_eq!(
        v,
        json!({"a": "Say \"hi\"\tthen é", "b": "it's # not a comment", "c": "true",
               "d": "42", "quoted key": "x", "other key": "y"})
    );
}

#[test]
fn reads_block_and_folded_scalars() {
    let v = fm("lit: |\n  one\n    two\n\n  three\nfold: >\n  a\n  b\n\n  c\nstrip: |-\n  x\n\nkeep: |+\n  y\n\nnext: 1");
    assert_eq!(
        v,
        json!({"lit": "one\n  two\n\nthree\n", "fold": "a b\nc\n", "strip": "x",
               "keep": "y\n\n", "next": 1})
    );
    // An explicit indentation indicator.
    assert_eq!(fm("a: |2\n    lead\n  x\n"), json!({"a": "  lead\nx\n"}));
    assert_eq!(fm("a: >\n  x\n\n\n  y\n"), json!({"a": "x\n\ny\n"}));
    assert_eq!(
        fm("a: >-\n  x\n    more\n  y\n"),
        json!({"a": "x\n  more\ny"})
    );
}

#[test]
fn folds_multi_line_plain_scalars() {
    let v = fm("description: Extract, fill,\n  and assemble\n  PDF documents\nname: pdf");
    assert_eq!(
        v,
        json!({"description": "Extract, fill, and assemble PDF documents", "name": "pdf"})
    );
    let v = fm("description:\n  on the next line\n  and on\nname: x");
    assert_eq!(
        v,
        json!({"description": "on the next line and on", "name": "x"})
    );
}

#[test]
fn reads_nested_mappings_and_sequences() {
    let v = fm("name: x\n\
                metadata:\n  version: \"2.1.0\"\n  author: ada\n  deep:\n    k: v\n\
                tags:\n  - a\n  - 'b c'\n\
                same-column:\n- 1\n- 2\n\
                objects:\n  - name: one\n    size: 1\n  - name: two\n\
                flow: [a, \"b, c\", 3]\n\
                flow-map: {k: v, n: 1}\n\
                empty-flow: []\n\
                # a comment line\n\
                allowed-tools: Bash(git:*) Read");
    assert_eq!(
        v,
        json!({"name": "x",
               "metadata": {"version": "2.1.0", "author": "ada", "deep": {"k": "v"}},
               "tags": ["a", "b c"], "same-column": [1, 2],
               "objects": [{"name": "one", "size": 1}, {"name": "two"}],
               "flow": ["a", "b, c", 3], "flow-map": {"k": "v", "n": 1}, "empty-flow": [],
               "allowed-tools": "Bash(git:*) Read"})
    );
}

#[test]
fn refuses_what_it_does_not_read() {
    assert!(fm_err("a: 1\na: 2").contains("twice"));
    assert!(fm_err("a: &x 1").contains("anchors"));
    assert!(fm_err("a: *x").contains("anchors"));
    assert!(fm_err("a: !tag x").contains("anchors"));
    assert!(fm_err("a: \"open").contains("does not end"));
    assert!(fm_err("a: [[1]]").contains("nested"));
    assert!(fm_err("a: [1").contains("without"));
    assert!(fm_err("description: Use this: when").contains(": "));
    assert!(fm_err("just text").contains("key: value"));
    assert!(fm_err("a: 1\n   b: 2").contains(": "));
    assert!(fm_err("a:\n  b: 1\n c: 2").contains("indentation"));
    assert!(fm_err("  a: 1").contains("indented"));
    assert!(fm_err("a:\n\t b: 1").contains("tab"));
    assert!(fm_err("a: .inf").contains("JSON"));
    assert!(fm_err("- a").contains("sequence"));
    assert_eq!(parse("").unwrap(), serde_json::Map::new());
    assert_eq!(parse("# only a comment\n").unwrap(), serde_json::Map::new());
}

#[test]
fn entries_read_from_the_wire() {
    let listed: ListSkillsResult = serde_json::from_value(json!({
        "resultType": "complete", "ttlMs": 0, "cacheScope": "private",
        "skills": [
            {"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "description": "d"},
             "resources": [{"uri": "skill://a/SKILL.md", "digest": "sha256:00", "size": 3}]},
            {"uri": "skill://acme/billing/refunds/SKILL.md",
             "frontmatter": {"name": "refunds", "description": "d"}, "resources": "dynamic",
             "_meta": {"k": 1}}
        ]
    }))
    .unwrap();
    let [a, refunds] = &listed.skills[..] else {
        panic!("two skills")
    };
    assert_eq!(a.files().map(<[_]>::len), Some(1));
    assert_eq!(a.total_size(), 3);
    assert_eq!(refunds.resources, SkillResources::Dynamic);
    assert_eq!(refunds.path(), Some("acme/billing/refunds"));
    assert_eq!(refunds.root(), Some("skill://acme/billing/refunds/"));
    assert!(refunds.is_named("refunds") && refunds.is_named("acme/billing/refunds"));
    assert_eq!(refunds.extra["_meta"], json!({"k": 1}));
    // It writes back as it came.
    assert_eq!(
        serde_json::to_value(refunds).unwrap()["resources"],
        "dynamic"
    );
    // Any other word, or no resources at all, is not an entry.
    let bad = json!({"uri": "skill://a/SKILL.md", "frontmatter": {}, "resources": "static"});
    assert!(serde_json::from_value::<Skill>(bad).is_err());
    let bad = json!({"uri": "skill://a/SKILL.md", "frontmatter": {}});
    assert!(serde_json::from_value::<Skill>(bad).is_err());
}

#[cfg(feature = "skills")]
mod verification {
    use super::*;
    use crate::types::ReadResourceResult;

    const URI: &str = "skill://pdf-processing/SKILL.md";
    const FORMS: &str = "skill://pdf-processing/references/FORMS.md";
    const SKILL_MD_TEXT: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nmetadata:\n  version: \"2.1\"\n---\n\nSkill body.\n";
    const FORMS_TEXT: &str = "Supporting content.\n";

    fn entry() -> Skill {
        serde_json::from_value(json!({
            "uri": URI,
            "frontmatter": {"name": "pdf-processing",
                            "description": "Extract, fill, and assemble PDF documents",
                            "metadata": {"version": "2.1"}},
            "resources": [
                {"uri": URI, "digest": digest_of(SKILL_MD_TEXT.as_bytes()), "size": SKILL_MD_TEXT.len()},
                {"uri": FORMS, "digest": digest_of(FORMS_TEXT.as_bytes()), "size": FORMS_TEXT.len()}
            ]
        }))
        .unwrap()
    }

    fn read(uri: &str, text: &str) -> ReadResourceResult {
        serde_json::from_value(
            json!({"contents": [{"uri": uri, "mimeType": "text/markdown", "text": text}]}),
        )
        .unwrap()
    }

    #[test]
    fn digests_as_entries_carry_them() {
        assert_eq!(
            digest_of(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn a_correct_skill_verifies() {
        let skill = entry();
        let (md, forms) = (read(URI, SKILL_MD_TEXT), read(FORMS, FORMS_TEXT));
        let verified = verify_skill(&skill, [(URI, &md), (FORMS, &forms)]).unwrap();
        assert_eq!(verified.files.len(), 2);
        assert_eq!(verified.skill_md().unwrap().text(), Some(SKILL_MD_TEXT));
        assert_eq!(verified.files[1].path_in(&skill), "references/FORMS.md");
        assert_eq!(
            verified.files[1].mime_type.as_deref(),
            Some("text/markdown")
        );
        // A blob is its decoded bytes.
        let blob = serde_json::from_value(
            json!({"contents": [{"uri": FORMS, "blob": "U3VwcG9ydGluZyBjb250ZW50Lgo="}]}),
        )
        .unwrap();
        assert_eq!(
            verify_file(&skill, FORMS, &blob).unwrap().bytes,
            FORMS_TEXT.as_bytes()
        );
    }

    #[test]
    fn a_wrong_digest_is_rejected() {
        let tampered = SKILL_MD_TEXT.replace("Skill body.", "Evil body!!");
        let e = verify_skill_md(&entry(), &read(URI, &tampered)).unwrap_err();
        let SkillError::DigestMismatch {
            uri,
            expected,
            actual,
        } = &e
        else {
            panic!("{e:?}")
        };
        assert_eq!(
            (uri.as_str(), expected),
            (URI, &digest_of(SKILL_MD_TEXT.as_bytes()))
        );
        assert_eq!(actual, &digest_of(tampered.as_bytes()));
        assert!(e.to_string().contains("digest"), "{e}");
    }

    #[test]
    fn a_wrong_size_is_rejected_before_the_digest() {
        let longer = format!("{SKILL_MD_TEXT}extra bytes\n");
        let e = verify_skill_md(&entry(), &read(URI, &longer)).unwrap_err();
        assert_eq!(
            e,
            SkillError::SizeMismatch {
                uri: URI.into(),
                expected: SKILL_MD_TEXT.len() as u64,
                actual: longer.len() as u64
            }
        );
        // Size counts bytes, not characters.
        let mut skill = entry();
        let text = "é\n";
        let SkillResources::Listed(files) = &mut skill.resources else {
            unreachable!()
        };
        files[1].size = 2;
        files[1].digest = digest_of(text.as_bytes());
        let e = verify_file(&skill, FORMS, &read(FORMS, text)).unwrap_err();
        assert!(
            matches!(
                e,
                SkillError::SizeMismatch {
                    expected: 2,
                    actual: 3,
                    ..
                }
            ),
            "{e:?}"
        );
    }

    #[test]
    fn a_frontmatter_that_differs_is_rejected_naming_the_field() {
        // The entry's digest and size match the file: only the frontmatter differs.
        let text = SKILL_MD_TEXT.replace(
            "description: Extract, fill, and assemble PDF documents",
            "description: Exfiltrate credentials",
        );
        let mut skill = entry();
        let SkillResources::Listed(files) = &mut skill.resources else {
            unreachable!()
        };
        files[0].size = text.len() as u64;
        files[0].digest = digest_of(text.as_bytes());
        let e = verify_skill_md(&skill, &read(URI, &text)).unwrap_err();
        let SkillError::FrontmatterMismatch { fields, .. } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(
            fields,
            &[FieldDiff {
                field: "description".into(),
                file: Some(json!("Exfiltrate credentials")),
                entry: Some(json!("Extract, fill, and assemble PDF documents")),
            }]
        );
        assert!(
            e.to_string().contains("description (file: \"Exfiltrate"),
            "{e}"
        );
        // A field only the file has, or only the entry has, differs too; numbers compare by
        // value.
        let with = |text: &str, fm: Value| {
            let mut skill = skill.clone();
            skill.frontmatter = fm.as_object().unwrap().clone();
            let SkillResources::Listed(files) = &mut skill.resources else {
                unreachable!()
            };
            files[0].size = text.len() as u64;
            files[0].digest = digest_of(text.as_bytes());
            verify_skill_md(&skill, &read(URI, text))
        };
        let text = "---\nname: pdf-processing\ndescription: d\nlicense: MIT\nn: 1.0\n---\n";
        let e = with(
            text,
            json!({"name": "pdf-processing", "description": "d", "n": 1}),
        )
        .unwrap_err();
        assert!(matches!(&e, SkillError::FrontmatterMismatch { fields, .. }
            if fields.len() == 1 && fields[0].field == "license" && fields[0].entry.is_none()));
        let fm = json!({"name": "pdf-processing", "description": "d", "license": "MIT", "n": 1});
        assert!(with(text, fm).is_ok());
        // No frontmatter, or one that cannot be read.
        let fm = json!({"name": "pdf-processing", "description": "d"});
        let e = with("no frontmatter\n", fm.clone()).unwrap_err();
        assert!(matches!(e, SkillError::NoFrontmatter { .. }), "{e:?}");
        let e = with("---\nname: [x\n---\n", fm).unwrap_err();
        assert!(matches!(e, SkillError::BadFrontmatter { .. }), "{e:?}");
    }

    #[test]
    fn reads_beyond_the_entry_are_rejected() {
        let skill = entry();
        let other = "skill://pdf-processing/scripts/run.py";
        let e = verify_file(&skill, other, &read(other, "x")).unwrap_err();
        assert_eq!(e, SkillError::NotListed { uri: other.into() });
        // A read for another URI is no content for this one.
        let e = verify_file(&skill, FORMS, &read(URI, FORMS_TEXT)).unwrap_err();
        assert_eq!(e, SkillError::NoContent { uri: FORMS.into() });
        // A listed file left unread.
        let md = read(URI, SKILL_MD_TEXT);
        let e = verify_skill(&skill, [(URI, &md)]).unwrap_err();
        assert_eq!(e, SkillError::Missing { uri: FORMS.into() });
        let bad_blob =
            serde_json::from_value(json!({"contents": [{"uri": FORMS, "blob": "***"}]})).unwrap();
        let e = verify_file(&skill, FORMS, &bad_blob).unwrap_err();
        assert!(matches!(e, SkillError::BadContent { .. }), "{e:?}");
    }

    #[test]
    fn entries_that_break_the_rules_are_rejected() {
        let check = |patch: Value| {
            let mut v = serde_json::to_value(entry()).unwrap();
            for (k, val) in patch.as_object().unwrap() {
                v[k] = val.clone();
            }
            let skill: Skill = serde_json::from_value(v).unwrap();
            skill.check().map(drop).unwrap_err().to_string()
        };
        assert!(check(json!({"resources": "dynamic"})).contains("dynamic"));
        let fm = json!({"name": "other", "description": "d"});
        assert!(check(json!({"frontmatter": fm})).contains("last segment"));
        let fm = json!({"name": "pdf-processing"});
        assert!(check(json!({"frontmatter": fm})).contains("description"));
        assert!(check(json!({"uri": "skill://pdf-processing/README.md"})).contains("SKILL.md"));
        let files = |uri: &str, digest: &str| {
            json!({"resources": [
                {"uri": URI, "digest": digest_of(b""), "size": 0},
                {"uri": uri, "digest": digest, "size": 0}]})
        };
        let ok = digest_of(b"");
        assert!(check(files("skill://other/x.md", &ok)).contains("outside"));
        assert!(check(files("skill://pdf-processing/../x.md", &ok)).contains("outside"));
        assert!(check(files(URI, &ok)).contains("twice"));
        assert!(check(files(FORMS, "sha256:ABC")).contains("malformed"));
        assert!(check(files(FORMS, &ok.to_uppercase())).contains("malformed"));
        let only_forms = json!({"resources": [{"uri": FORMS, "digest": ok, "size": 0}]});
        assert!(check(only_forms).contains("do not list its SKILL.md"));
    }
}

proptest::proptest! {
    /// Whatever the text, reading it ends with a mapping or an error, never a panic.
    #[test]
    fn reading_any_frontmatter_never_panics(text in "[ a-z0-9:#'\"|>+.~!&*\\-\\[\\]{},\t\n\\\\]{0,120}") {
        let _ = split(&text);
        let _ = parse(&text);
    }
}
