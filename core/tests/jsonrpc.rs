//! The JSON-RPC model: ids, shapes, typed parse errors, batches, compact encoding.

use mcpwire_core::jsonrpc::{
    self, ErrorObject, Id, Message, MessageRef, ParseError, Parsed, RawJson,
};

fn one(text: &str) -> Result<Message, ParseError> {
    match jsonrpc::parse(text.as_bytes())? {
        Parsed::Single(m) => Ok(m),
        Parsed::Batch(_) => panic!("unexpected batch for {text}"),
    }
}

#[test]
fn integer_and_string_ids_and_zero_is_valid() {
    let m = one(r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#).unwrap();
    let Message::Request(r) = m else { panic!() };
    assert_eq!(r.id, Id::Num(0));
    let m = one(r#"{"jsonrpc":"2.0","id":"abc","method":"ping"}"#).unwrap();
    let Message::Request(r) = m else { panic!() };
    assert_eq!(r.id, Id::Str("abc".into()));
    let m = one(r#"{"jsonrpc":"2.0","id":-7,"result":{}}"#).unwrap();
    let Message::Response(r) = m else { panic!() };
    assert_eq!(r.id, Some(Id::Num(-7)));
}

#[test]
fn numeric_id_echoed_as_string_still_matches() {
    assert_eq!(Id::Str("42".into()).as_i64(), Some(42));
    assert_eq!(Id::Str("0".into()).as_i64(), Some(0));
    assert_eq!(Id::Str("-3".into()).as_i64(), Some(-3));
    assert_eq!(Id::Num(42).as_i64(), Some(42));
    // Not the canonical spelling of a number: no match.
    for s in [
        "042",
        " 42",
        "42 ",
        "+42",
        "4.0",
        "",
        "-",
        "abc",
        "99999999999999999999",
    ] {
        assert_eq!(Id::Str(s.into()).as_i64(), None, "{s:?}");
    }
}

#[test]
fn invalid_ids_are_typed_errors() {
    for (text, what) in [
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#, "float"),
        (r#"{"jsonrpc":"2.0","id":true,"method":"x"}"#, "bool"),
        (r#"{"jsonrpc":"2.0","id":[1],"method":"x"}"#, "array"),
        (r#"{"jsonrpc":"2.0","id":{},"result":{}}"#, "object"),
        (
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"result":{}}"#,
            "u64 beyond i64",
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
            "null request id",
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            "null id on a result",
        ),
        (r#"{"jsonrpc":"2.0","result":{}}"#, "missing id on a result"),
    ] {
        assert!(
            matches!(one(text), Err(ParseError::InvalidId(_))),
            "{what}: {:?}",
            one(text)
        );
    }
}

#[test]
fn error_response_with_missing_or_null_id_is_accepted() {
    for text in [
        r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
    ] {
        let Message::Response(r) = one(text).unwrap() else {
            panic!()
        };
        assert_eq!(r.id, None);
        assert_eq!(
            r.outcome.unwrap_err(),
            ErrorObject::new(-32700, "Parse error")
        );
    }
}

#[test]
fn error_data_stays_raw_until_asked() {
    let text = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"Unsupported","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}"#;
    let Message::Response(r) = one(text).unwrap() else {
        panic!()
    };
    let e = r.outcome.unwrap_err();
    assert_eq!(e.code, -32022);
    assert_eq!(
        e.data.as_ref().unwrap().get(),
        r#"{"supported":["2025-11-25"],"requested":"2026-07-28"}"#
    );
    let v: serde_json::Value = e.data_as().unwrap().unwrap();
    assert_eq!(v["supported"][0], "2025-11-25");
}

#[test]
fn notification_request_and_response_shapes() {
    let Message::Notification(n) =
        one(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap()
    else {
        panic!()
    };
    assert_eq!(n.method, "notifications/initialized");
    assert!(n.params.is_none());

    let Message::Request(r) =
        one(r#"{"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"}},"jsonrpc":"2.0","id":1}"#)
            .unwrap()
    else {
        panic!()
    };
    assert_eq!(
        r.params.unwrap().get(),
        r#"{"name":"echo","arguments":{"m":"hi"}}"#
    );

    // A present null result is a result.
    let Message::Response(r) = one(r#"{"jsonrpc":"2.0","id":1,"result":null}"#).unwrap() else {
        panic!()
    };
    assert_eq!(r.outcome.unwrap().get(), "null");
}

#[test]
fn unknown_members_are_ignored() {
    let m = one(r#"{"jsonrpc":"2.0","id":1,"result":{},"extra":[1,2]}"#).unwrap();
    assert!(matches!(m, Message::Response(_)));
}

#[test]
fn typed_parse_errors() {
    use ParseError::*;
    type Check = fn(&ParseError) -> bool;
    let cases: &[(&str, Check)] = &[
        ("not json", |e| matches!(e, NotJson(_))),
        ("{\"jsonrpc\":\"2.0\",", |e| matches!(e, NotJson(_))),
        ("", |e| matches!(e, NotJson(_))),
        ("\"a string\"", |e| matches!(e, NotObject)),
        ("42", |e| matches!(e, NotObject)),
        ("null", |e| matches!(e, NotObject)),
        ("[]", |e| matches!(e, EmptyBatch)),
        (r#"{"id":1,"method":"x"}"#, |e| matches!(e, WrongVersion)),
        (r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#, |e| {
            matches!(e, WrongVersion)
        }),
        (r#"{"jsonrpc":2.0,"id":1,"method":"x"}"#, |e| {
            matches!(e, InvalidMember(_))
        }),
        (r#"{"jsonrpc":"2.0","id":1,"method":5}"#, |e| {
            matches!(e, InvalidMember(_))
        }),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#,
            |e| matches!(e, InvalidMember(_)),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#,
            |e| matches!(e, AmbiguousShape(_)),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"x","result":{}}"#,
            |e| matches!(e, AmbiguousShape(_)),
        ),
        (r#"{"jsonrpc":"2.0","id":1}"#, |e| {
            matches!(e, AmbiguousShape(_))
        }),
        (r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#, |e| {
            matches!(e, InvalidMember(_))
        }),
        (
            "{\"jsonrpc\":\"2.0\",\"method\":\"\u{0}\u{1}\"}\u{0}",
            |e| matches!(e, NotJson(_)),
        ),
    ];
    for (text, check) in cases {
        let err = one(text).expect_err(text);
        assert!(check(&err), "{text}: got {err:?}");
    }
    // Not UTF-8.
    assert!(matches!(
        jsonrpc::parse(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}"),
        Err(NotJson(_))
    ));
}

#[test]
fn batch_is_split_into_messages_each_judged_alone() {
    let text = r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"n"},42,{"jsonrpc":"2.0"}]"#;
    let Parsed::Batch(items) = jsonrpc::parse(text.as_bytes()).unwrap() else {
        panic!()
    };
    assert_eq!(items.len(), 4);
    assert!(matches!(items[0], Ok(Message::Response(_))));
    assert!(matches!(items[1], Ok(Message::Notification(_))));
    assert_eq!(items[2], Err(ParseError::NotObject));
    assert!(matches!(items[3], Err(ParseError::AmbiguousShape(_))));
    // A broken batch is not JSON.
    assert!(matches!(
        jsonrpc::parse(b"[{\"jsonrpc\":\"2.0\"},"),
        Err(ParseError::NotJson(_))
    ));
}

#[test]
fn borrowed_view_does_not_copy_params() {
    let text = br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x"}}"#;
    let Parsed::Single(MessageRef::Request { id, method, params }) =
        jsonrpc::parse_ref(text).unwrap()
    else {
        panic!()
    };
    assert_eq!(id, Id::Num(9));
    assert!(matches!(method, std::borrow::Cow::Borrowed("tools/call")));
    let p = params.unwrap().get();
    // The params text points into the input.
    let range = text.as_ptr_range();
    assert!(range.contains(&p.as_ptr()));
}

#[test]
fn encoding_is_compact_and_never_contains_a_newline() {
    let pretty =
        RawJson::from_string("{\n  \"a\": [1,\r\n 2],\n  \"s\": \"line\\nbreak\"\n}".into())
            .unwrap();
    let m = Message::request(5, "tools/call", Some(pretty));
    let bytes = m.to_bytes();
    assert!(
        !bytes.contains(&b'\n') && !bytes.contains(&b'\r'),
        "{}",
        String::from_utf8_lossy(&bytes)
    );
    assert_eq!(
        String::from_utf8(bytes.clone()).unwrap(),
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{  "a": [1, 2],  "s": "line\nbreak"}}"#
    );
    // It parses back to the same meaning.
    let again: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(again["params"]["s"], "line\nbreak");

    let e = Message::error(None, ErrorObject::new(-32600, "multi\nline"));
    assert_eq!(
        String::from_utf8(e.to_bytes()).unwrap(),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"multi\nline"}}"#
    );
    let n = Message::notification("notifications/initialized", None);
    assert_eq!(
        String::from_utf8(n.to_bytes()).unwrap(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
    );
    let r = Message::result(
        Id::Str("a\"b".into()),
        RawJson::new(&serde_json::json!({"k": 1})).unwrap(),
    );
    assert_eq!(
        String::from_utf8(r.to_bytes()).unwrap(),
        r#"{"jsonrpc":"2.0","id":"a\"b","result":{"k":1}}"#
    );
}

#[test]
fn encode_then_parse_round_trips() {
    let msgs = vec![
        Message::request(0, "ping", None),
        Message::request(
            Id::Str("x".into()),
            "tools/list",
            Some(RawJson::new(&serde_json::json!({"cursor": ""})).unwrap()),
        ),
        Message::notification(
            "notifications/progress",
            Some(RawJson::new(&serde_json::json!({"progress": 1.5})).unwrap()),
        ),
        Message::result(
            Id::Num(i64::MAX),
            RawJson::new(&serde_json::json!({})).unwrap(),
        ),
        Message::error(
            Some(Id::Num(-1)),
            ErrorObject {
                code: -1,
                message: "no".into(),
                data: Some(RawJson::new(&[1, 2]).unwrap()),
            },
        ),
    ];
    for m in msgs {
        let Parsed::Single(back) = jsonrpc::parse(&m.to_bytes()).unwrap() else {
            panic!()
        };
        assert_eq!(back, m);
    }
}

#[test]
fn typed_views_parse_on_demand() {
    #[derive(serde::Deserialize)]
    struct Call<'a> {
        name: &'a str,
    }
    let Message::Request(r) =
        one(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#).unwrap()
    else {
        panic!()
    };
    let c: Call<'_> = r.params_as().unwrap();
    assert_eq!(c.name, "echo");
}

#[test]
fn an_id_is_read_from_the_first_bytes_only_where_servers_put_it() {
    use mcpwire_core::jsonrpc::sniff_id;
    assert_eq!(
        sniff_id(br#"{"jsonrpc":"2.0","id":42,"result":{"te"#),
        Some(Id::Num(42))
    );
    assert_eq!(
        sniff_id(br#"{"jsonrpc": "2.0", "id" : "a-1", "result""#),
        Some(Id::Str("a-1".into()))
    );
    // After the result (or inside it), an "id" is not the message's.
    assert_eq!(sniff_id(br#"{"jsonrpc":"2.0","result":{"id":3"#), None);
    assert_eq!(sniff_id(br#"{"jsonrpc":"2.0","id":"#), None);
    assert_eq!(sniff_id(b"not json at all"), None);
}
