//! Sampling with tools and URL-mode elicitation's completion through the public `Client`, in
//! both eras, against a scripted server joined by in-memory streams: `sampling.tools` is
//! declared, `tools` and `toolChoice` reach the handler, its `tool_use` answer reaches the
//! server intact; a host that did not declare tools is never asked; the completion of a URL
//! elicitation arrives as a typed notification; a list change forgets the tools' schemas.

use std::sync::{Arc, Mutex};

use futures_lite::{AsyncBufReadExt, AsyncWriteExt, StreamExt};
use mcpwire::core::types::{CreateMessageParams, CreateMessageResult};
use mcpwire::{connect_streams, ConnectOptions, Era, Handlers, ServerNotification};
use serde_json::{json, Value};

/// What the scripted server saw: the capabilities declared, and the sampling answers.
#[derive(Default)]
struct Seen {
    capabilities: Vec<Value>,
    answers: Vec<Value>,
}

fn sampling_params() -> Value {
    json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "Weather in Paris?"}}],
        "maxTokens": 50,
        "tools": [{"name": "forecast", "inputSchema": {"type": "object",
                   "properties": {"city": {"type": "string"}}}}],
        "toolChoice": {"mode": "required"}
    })
}

/// A server that answers the handshake (either era) and a `plan` call that samples with
/// tools: a `sampling/createMessage` request (handshake era) or an `input_required` round
/// (stateless era). Its result's text is the sampling answer it got.
async fn scripted(
    input: piper::Reader,
    mut output: piper::Writer,
    seen: Arc<Mutex<Seen>>,
) -> std::io::Result<()> {
    let mut lines = futures_lite::io::BufReader::new(input).lines();
    let mut waiting: Option<Value> = None;
    while let Some(line) = lines.next().await {
        let m: Value = serde_json::from_str(&line?).unwrap_or_default();
        let id = m.get("id").cloned().unwrap_or(Value::Null);
        let mut out = Vec::new();
        let method = m.get("method").and_then(Value::as_str).unwrap_or("");
        if let Some(caps) = m.pointer("/params/capabilities") {
            seen.lock().unwrap().capabilities.push(caps.clone());
        }
        if let Some(caps) = m.pointer("/params/_meta/io.modelcontextprotocol~1clientCapabilities") {
            seen.lock().unwrap().capabilities.push(caps.clone());
        }
        match method {
            "initialize" => out.push(json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted", "version": "1"}}})),
            "server/discover" => out.push(json!({"jsonrpc": "2.0", "id": id, "result": {
                "resultType": "complete", "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "1"}}}})),
            "tools/call" if m.pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion").is_some() => {
                match m.pointer("/params/inputResponses/s1") {
                    None => out.push(json!({"jsonrpc": "2.0", "id": id, "result": {
                        "resultType": "input_required",
                        "inputRequests": {"s1": {"method": "sampling/createMessage",
                                                 "params": sampling_params()}}}})),
                    Some(answer) => {
                        seen.lock().unwrap().answers.push(answer.clone());
                        out.push(json!({"jsonrpc": "2.0", "id": id, "result": {
                            "resultType": "complete",
                            "content": [{"type": "text", "text": answer.to_string()}]}}));
                    }
                }
            }
            "tools/list" => out.push(json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                {"name": "shaped", "inputSchema": {},
                 "outputSchema": {"type": "object", "required": ["x"]}}]}})),
            "tools/call" if m.pointer("/params/name") == Some(&json!("shaped")) => {
                out.push(json!({"jsonrpc": "2.0", "id": id, "result": {
                    "content": [], "structuredContent": {"y": 1}}}))
            }
            "tools/call" if m.pointer("/params/name") == Some(&json!("change")) => {
                out.push(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
                out.push(json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}}));
            }
            "tools/call" => {
                waiting = Some(id);
                out.push(json!({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage",
                                "params": sampling_params()}));
            }
            "" if id == json!("s1") => {
                let answer = m.get("result").or(m.get("error")).cloned().unwrap_or_default();
                seen.lock().unwrap().answers.push(answer.clone());
                let call = waiting.take().unwrap_or_default();
                out.push(json!({"jsonrpc": "2.0", "id": call, "result": {
                    "content": [{"type": "text", "text": answer.to_string()}]}}));
                out.push(json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
                                "params": {"elicitationId": "e-7"}}));
            }
            _ => {}
        }
        for m in out {
            output.write_all(format!("{m}\n").as_bytes()).await?;
        }
        output.flush().await?;
    }
    Ok(())
}

/// Connects to the scripted server in `era` with `handlers`; gives the client and what the
/// server saw.
fn connect(era: Era, handlers: Handlers) -> (mcpwire::Client, Arc<Mutex<Seen>>) {
    let (server_reads, client_writes) = piper::pipe(64 * 1024);
    let (client_reads, server_writes) = piper::pipe(64 * 1024);
    let seen = Arc::new(Mutex::new(Seen::default()));
    smol::spawn(scripted(server_reads, server_writes, seen.clone())).detach();
    let options = ConnectOptions {
        era,
        handlers,
        ..ConnectOptions::default()
    };
    let (client, driver) = connect_streams("scripted", client_reads, client_writes, options);
    smol::spawn(driver).detach();
    (client, seen)
}

fn tool_using_model() -> Handlers {
    Handlers::new()
        .on_sampling(|p: CreateMessageParams| async move {
            assert_eq!(p.tools.as_ref().unwrap()[0].name, "forecast");
            assert_eq!(p.tool_choice, Some(json!({"mode": "required"})));
            let mut answer = CreateMessageResult::text("fake", "");
            answer.content = vec![json!({"type": "tool_use", "id": "u1", "name": "forecast",
                                         "input": {"city": "Paris"}})];
            answer.stop_reason = Some("toolUse".into());
            Ok(answer)
        })
        .with_sampling_tools()
}

#[test]
fn sampling_with_tools_reaches_the_handler_and_its_tool_use_the_server_in_both_eras() {
    for era in [Era::Handshake, Era::Stateless] {
        smol::block_on(async {
            let (client, seen) = connect(era, tool_using_model());
            let mut notifications = client.notifications();
            let r = client.call_tool("plan", json!({})).await.unwrap();
            let answer: Value = serde_json::from_str(&r.text()).unwrap();
            assert_eq!(answer["stopReason"], "toolUse", "{era:?}");
            assert_eq!(answer["content"][0]["input"], json!({"city": "Paris"}));
            let declared = std::mem::take(&mut seen.lock().unwrap().capabilities);
            assert!(!declared.is_empty());
            for caps in &declared {
                assert_eq!(caps["sampling"]["tools"], json!({}), "{era:?}: {caps}");
            }
            if era == Era::Handshake {
                let n = notifications.next().await.unwrap();
                assert_eq!(
                    n,
                    ServerNotification::ElicitationComplete {
                        elicitation_id: "e-7".into()
                    }
                );
            }
            client.close().await;
        });
    }
}

/// A sampling handler that counts its calls.
fn counting_model(asked: Arc<Mutex<usize>>) -> Handlers {
    Handlers::new().on_sampling_json(move |_params: Value| {
        *asked.lock().unwrap() += 1;
        async { Ok(json!({"role": "assistant", "model": "fake", "content": {"type": "text", "text": "-"}})) }
    })
}

#[test]
fn a_host_that_did_not_declare_tools_is_not_asked_to_sample_with_them() {
    smol::block_on(async {
        let asked = Arc::new(Mutex::new(0));
        let (client, seen) = connect(Era::Handshake, counting_model(asked.clone()));
        let r = client.call_tool("plan", json!({})).await.unwrap();
        let answer: Value = serde_json::from_str(&r.text()).unwrap();
        assert_eq!(answer["code"], -32602, "{answer}");
        assert_eq!(*asked.lock().unwrap(), 0);
        let declared = std::mem::take(&mut seen.lock().unwrap().capabilities);
        assert_eq!(declared[0]["sampling"], json!({}));
        client.close().await;
    });
}

#[cfg(feature = "schemas")]
#[test]
fn a_list_change_forgets_the_schemas_until_the_tools_are_listed_again() {
    smol::block_on(async {
        let (client, _) = connect(Era::Handshake, Handlers::new());
        let mut notifications = client.notifications();
        client.list_tools().await.unwrap();
        let e = client.call_tool("shaped", json!({})).await.unwrap_err();
        assert!(matches!(e, mcpwire::Error::Schema { .. }), "{e:?}");
        client.call_tool("change", json!({})).await.unwrap();
        assert_eq!(
            notifications.next().await,
            Some(ServerNotification::ToolsListChanged)
        );
        // The schema it had may be gone: the result is not held to it.
        assert!(client.tool_schemas().is_none());
        assert!(client.call_tool("shaped", json!({})).await.is_ok());
        client.list_tools().await.unwrap();
        assert!(client.call_tool("shaped", json!({})).await.is_err());
        client.close().await;
    });
}

#[test]
fn in_the_stateless_era_the_refused_input_fails_the_call_typed() {
    smol::block_on(async {
        let asked = Arc::new(Mutex::new(0));
        let (client, _) = connect(Era::Stateless, counting_model(asked.clone()));
        let e = client.call_tool("plan", json!({})).await.unwrap_err();
        assert!(
            matches!(&e, mcpwire::Error::Call(mcpwire::core::CallError::InputFailed { key, error })
                if key == "s1" && error.code == -32602),
            "{e:?}"
        );
        assert_eq!(*asked.lock().unwrap(), 0);
        client.close().await;
    });
}
