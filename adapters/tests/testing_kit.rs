//! The test kit (`mcpwire::testing`): a scripted server in memory, each behaviour a host must
//! survive, in both eras, on smol and on tokio (current_thread with its clock paused, and
//! multi-thread with the real one).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire::core::jsonrpc::ErrorObject;
use mcpwire::core::types::CreateMessageResult;
use mcpwire::testing::{ScriptedServer, ServerEra, ServerHandle, ToolResult, Way};
use mcpwire::{
    CallOptions, ChosenEra, Client, CompletionRef, ConnectOptions, ElicitAnswer, Error, Handlers,
    Root, ServerNotification,
};
use serde_json::{json, Value};

/// One test per runtime for each function named: smol, tokio's current_thread runtime with its
/// clock paused, tokio's multi-thread runtime.
macro_rules! on_both_runtimes {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn smol() {
                super::$name(super::Rt::Smol)
            }

            #[test]
            fn tokio_paused() {
                super::$name(super::Rt::TokioPaused)
            }

            #[test]
            fn tokio_multi_thread() {
                super::$name(super::Rt::TokioMultiThread)
            }
        }
    )*};
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Rt {
    Smol,
    TokioPaused,
    TokioMultiThread,
}

impl Rt {
    fn block_on<F: std::future::Future>(self, f: F) -> F::Output {
        match self {
            Rt::Smol => smol::block_on(f),
            Rt::TokioPaused => tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .start_paused(true)
                .build()
                .unwrap()
                .block_on(f),
            Rt::TokioMultiThread => tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap()
                .block_on(f),
        }
    }

    async fn connect(
        self,
        server: ScriptedServer,
        options: ConnectOptions,
    ) -> (Client, ServerHandle) {
        match self {
            Rt::Smol => server.connect_smol(options).await,
            _ => server.connect_tokio(options).await,
        }
        .expect("connected to the scripted server")
    }

    /// Spawns `f` on the runtime.
    fn spawn<F>(self, f: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        match self {
            Rt::Smol => smol::spawn(f).detach(),
            _ => drop(tokio::spawn(f)),
        }
    }
}

const ERAS: [ServerEra; 2] = [ServerEra::Handshake, ServerEra::Stateless];

fn chosen(era: ServerEra) -> ChosenEra {
    match era {
        ServerEra::Handshake => ChosenEra::Handshake,
        ServerEra::Stateless => ChosenEra::Stateless,
    }
}

fn num(call: &Value, key: &str) -> i64 {
    call[key].as_i64().unwrap_or_default()
}

/// Tools (progress, structured results), prompts, resources, templates and completions, in
/// each era, answered from closures, and a transcript that shows what went which way.
fn offers_everything_from_closures(rt: Rt) {
    rt.block_on(async {
        for era in ERAS {
            let server = ScriptedServer::new()
                .era(era)
                .name("kit")
                .tool("add", json!({"type": "object"}), |call| async move {
                    call.progress(1.0, Some(2.0), Some("adding"));
                    let sum = num(&call.arguments, "a") + num(&call.arguments, "b");
                    call.progress(2.0, Some(2.0), None);
                    Ok(ToolResult::text(&sum.to_string()).structured(json!({"sum": sum})))
                })
                .prompt(
                    "greet",
                    json!([{"name": "who", "required": true}]),
                    |args| {
                        let who = args["who"].as_str().unwrap_or("nobody");
                        Ok(json!({"messages": [{"role": "user",
                        "content": {"type": "text", "text": format!("Say hello to {who}.")}}]}))
                    },
                )
                .resource("kit://readme", "readme", |_| Ok("read me".into()))
                .template("kit://notes/{id}", "notes", |uri| {
                    Ok(format!("note {}", &uri["kit://notes/".len()..]))
                })
                .completion(|_, argument| {
                    let typed = argument["value"].as_str().unwrap_or("").to_owned();
                    ["alpha", "alps", "beta"]
                        .into_iter()
                        .filter(|w| w.starts_with(&typed))
                        .map(str::to_owned)
                        .collect()
                });
            let (client, server) = rt.connect(server, ConnectOptions::default()).await;
            assert_eq!(client.era(), Some(chosen(era)));
            assert_eq!(client.server_info().unwrap().server_info.name, "kit");

            let tools = client.list_tools().await.unwrap();
            assert_eq!(tools.len(), 1);
            let seen = Arc::new(Mutex::new(Vec::new()));
            let progress = seen.clone();
            let opts = CallOptions::default()
                .on_progress(move |p| progress.lock().unwrap().push(p.progress));
            let sum = client
                .call_tool_with("add", json!({"a": 2, "b": 40}), opts)
                .await
                .unwrap();
            assert_eq!(sum.text(), "42");
            assert_eq!(sum.structured_content, Some(json!({"sum": 42})));
            assert_eq!(*seen.lock().unwrap(), vec![1.0, 2.0], "{era:?}");

            let prompt = client.get_prompt("greet", None).await;
            assert!(prompt.is_ok(), "{prompt:?}");
            let mut args = serde_json::Map::new();
            args.insert("who".into(), json!("Ada"));
            let prompt = client.get_prompt("greet", Some(args)).await.unwrap();
            assert!(prompt.messages[0].to_string().contains("Say hello to Ada."));
            assert_eq!(client.list_prompts().await.unwrap().len(), 1);

            assert_eq!(client.list_resources().await.unwrap().len(), 1);
            assert_eq!(client.list_resource_templates().await.unwrap().len(), 1);
            let read = client.read_resource("kit://readme").await.unwrap();
            assert_eq!(read.contents[0]["text"], "read me");
            let note = client.read_resource("kit://notes/7").await.unwrap();
            assert_eq!(note.contents[0]["text"], "note 7");
            let missing = client.read_resource("kit://nowhere").await;
            assert!(missing.is_err(), "{missing:?}");

            let reference = CompletionRef::Prompt("greet".into());
            let done = client
                .complete(&reference, "who", "al", None, CallOptions::default())
                .await
                .unwrap();
            assert_eq!(done.completion.values, ["alpha", "alps"]);

            // The transcript: the call and its answer under one id, the progress between.
            let wire = server.transcript();
            let call = wire.named("tools/call").next().expect("a call");
            assert_eq!(call.way, Way::ToServer);
            assert_eq!(
                call.params().unwrap()["arguments"],
                json!({"a": 2, "b": 40})
            );
            let answer = wire.response_to(Way::ToServer, call.id().unwrap()).unwrap();
            assert_eq!(answer.result().unwrap()["structuredContent"]["sum"], 42);
            let at = |m: &mcpwire::testing::WireMessage| {
                wire.messages.iter().position(|x| x == m).unwrap()
            };
            let progress: Vec<_> = wire.named("notifications/progress").collect();
            assert_eq!(progress.len(), 2, "{wire}");
            assert!(
                at(call) < at(progress[0]) && at(progress[1]) < at(answer),
                "{wire}"
            );
            let shown = wire.to_string();
            assert!(
                shown.contains("client → server #") && shown.contains(" tools/call {"),
                "{shown}"
            );
            let first = match era {
                ServerEra::Handshake => "initialize",
                ServerEra::Stateless => "server/discover",
            };
            let to_server = wire.methods(Way::ToServer);
            assert!(to_server.contains(&first), "{wire}");
            client.close().await;
        }
    });
}

/// The host's handlers: an elicitation, a sampling and a roots request, each in the middle of
/// a call, the tool going on with the answer (in the stateless era, as `input_required`
/// rounds the client answers by retrying).
fn asks_the_client_in_the_middle_of_a_call(rt: Rt) {
    rt.block_on(async {
        for era in ERAS {
            let server = ScriptedServer::new()
                .era(era)
                .tool("confirm", json!({"type": "object"}), |call| async move {
                    let schema = json!({"type": "object",
                        "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
                    let answer = call.elicit("Really?", schema).await?;
                    let text = format!("{} {}", answer["action"], answer["content"]["ok"]);
                    Ok(ToolResult::text(&text))
                })
                .tool("summarise", json!({"type": "object"}), |call| async move {
                    let said = call.sample("summarise this", 50).await?;
                    Ok(ToolResult::text(&format!(
                        "model: {}",
                        said["content"]["text"]
                    )))
                })
                .tool("where", json!({"type": "object"}), |call| async move {
                    let roots = call.roots().await?;
                    Ok(ToolResult::text(&roots["roots"][0]["uri"].to_string()))
                });
            let handlers = Handlers::new()
                .on_elicitation(|request| async move {
                    assert_eq!(request.message(), "Really?");
                    Ok(ElicitAnswer::accept(json!({"ok": true})))
                })
                .on_sampling(|request| async move {
                    let asked = request.messages[0].text_content();
                    Ok(CreateMessageResult::text("m", &format!("short {asked}")))
                })
                .on_roots(|| async {
                    Ok(vec![Root {
                        uri: "file:///work".into(),
                        name: None,
                        meta: None,
                    }])
                });
            let options = ConnectOptions::default().handlers(handlers);
            let (client, server) = rt.connect(server, options).await;

            let r = client.call_tool("confirm", json!({})).await.unwrap();
            assert_eq!(r.text(), "\"accept\" true", "{era:?}");
            let r = client.call_tool("summarise", json!({})).await.unwrap();
            assert_eq!(r.text(), "model: \"short summarise this\"", "{era:?}");
            let r = client.call_tool("where", json!({})).await.unwrap();
            assert_eq!(r.text(), "\"file:///work\"", "{era:?}");

            let wire = server.transcript();
            match era {
                // Requests of the server's, each answered under its own id.
                ServerEra::Handshake => {
                    let asked = wire.methods(Way::ToClient);
                    for method in ["elicitation/create", "sampling/createMessage", "roots/list"] {
                        assert!(asked.contains(&method), "{wire}");
                        let request = wire.named(method).next().unwrap();
                        let answer = wire.response_to(Way::ToClient, request.id().unwrap());
                        assert!(answer.is_some_and(|a| a.result().is_some()), "{wire}");
                    }
                }
                // Each call answered `input_required`, then tried again with the inputs.
                ServerEra::Stateless => {
                    let calls: Vec<_> = wire.named("tools/call").collect();
                    assert_eq!(calls.len(), 6, "{wire}");
                    let retry = calls[1].params().unwrap();
                    assert_eq!(
                        retry["inputResponses"]["input"]["action"], "accept",
                        "{wire}"
                    );
                }
            }
            client.close().await;
        }
    });
}

/// A slow answer: one within the call's timeout arrives; one past it ends the call with a
/// timeout. On tokio's paused clock the tool sleeps a minute and the test takes no time.
fn a_slow_answer_and_a_timeout(rt: Rt) {
    rt.block_on(async {
        let (sleep, timeout) = match rt {
            Rt::TokioPaused => (Duration::from_secs(60), Duration::from_secs(30)),
            _ => (Duration::from_millis(400), Duration::from_millis(100)),
        };
        for era in ERAS {
            let server = ScriptedServer::new().era(era).tool(
                "slow",
                json!({"type": "object"}),
                move |call| async move {
                    call.sleep(sleep).await;
                    Ok(ToolResult::text("finally"))
                },
            );
            let (client, _server) = rt.connect(server, ConnectOptions::default()).await;
            let started = tokio::time::Instant::now();
            let patient = CallOptions::default().timeout(sleep * 4);
            let r = client.call_tool_with("slow", json!({}), patient).await;
            assert_eq!(r.unwrap().text(), "finally");
            if rt == Rt::TokioPaused {
                // The paused clock moved by the tool's sleep, and no further.
                let took = started.elapsed();
                assert!(took >= sleep && took < sleep * 2, "{took:?}");
            }
            let hasty = CallOptions::default().timeout(timeout);
            let r = client.call_tool_with("slow", json!({}), hasty).await;
            let words = format!("{:?}", r.as_ref().err());
            assert!(words.contains("Timeout"), "{era:?}: {r:?}");
            client.close().await;
        }
    });
}

/// A JSON-RPC error from a tool and from a failed method, and an `isError` result: each is
/// what the host sees, and the connection lives on.
fn errors_and_is_error_results(rt: Rt) {
    rt.block_on(async {
        for era in ERAS {
            let server = ScriptedServer::new()
                .era(era)
                .tool("refuse", json!({"type": "object"}), |_| async {
                    Err(ErrorObject::new(-32050, "not today"))
                })
                .tool("broken", json!({"type": "object"}), |_| async {
                    Ok(ToolResult::error("the disk is full"))
                })
                .fail("prompts/list", ErrorObject::new(-32603, "prompts are down"));
            let (client, _server) = rt.connect(server, ConnectOptions::default()).await;
            match client.call_tool("refuse", json!({})).await {
                Err(Error::Call(mcpwire::core::CallError::Server(e))) => {
                    assert_eq!((e.code, e.message.as_str()), (-32050, "not today"));
                }
                other => panic!("{era:?}: {other:?}"),
            }
            let r = client.call_tool("broken", json!({})).await.unwrap();
            assert!(r.is_error, "{r:?}");
            assert_eq!(r.text(), "the disk is full");
            match client.list_prompts().await {
                Err(Error::Call(mcpwire::core::CallError::Server(e))) => {
                    assert_eq!(e.message, "prompts are down")
                }
                other => panic!("{era:?}: {other:?}"),
            }
            assert_eq!(client.list_tools().await.unwrap().len(), 2);
            client.close().await;
        }
    });
}

/// The server drops the connection in the middle of a call: the call ends with an error,
/// the client is closed, and nothing waits forever.
fn a_dropped_connection(rt: Rt) {
    rt.block_on(async {
        for era in ERAS {
            let server = ScriptedServer::new().era(era).tool(
                "vanish",
                json!({"type": "object"}),
                |call| async move {
                    call.drop_connection();
                    call.sleep(Duration::from_secs(3600)).await;
                    Ok(ToolResult::text("never"))
                },
            );
            let (client, _server) = rt.connect(server, ConnectOptions::default()).await;
            let r = client.call_tool("vanish", json!({})).await;
            assert!(r.is_err(), "{era:?}: {r:?}");
            let after = client.list_tools().await;
            assert!(matches!(after, Err(Error::Closed(_))), "{era:?}: {after:?}");
            assert!(client.closed_reason().is_some());
        }
    });
}

/// `list_changed`: in the handshake era a plain notification; in the stateless era on the
/// subscription the host opened with `subscriptions/listen`, and the new list is there.
fn list_changed_notifications(rt: Rt) {
    rt.block_on(async {
        for era in ERAS {
            let server =
                ScriptedServer::new()
                    .era(era)
                    .tool("one", json!({"type": "object"}), |_| async {
                        Ok(ToolResult::text("1"))
                    });
            let (client, server) = rt.connect(server, ConnectOptions::default()).await;
            let mut notes = client.notifications();
            if era == ServerEra::Stateless {
                let listener = client.clone();
                rt.spawn(async move {
                    let _ = listener.listen(json!({"toolsListChanged": true})).await;
                });
                match notes.next().await {
                    Some(ServerNotification::SubscriptionAcknowledged { .. }) => {}
                    other => panic!("{other:?}"),
                }
            }
            server.add_tool("two", json!({"type": "object"}), |_| async {
                Ok(ToolResult::text("2"))
            });
            server.tools_changed();
            let changed = match notes.next().await {
                Some(ServerNotification::ForSubscription { notification, .. }) => *notification,
                other => other.expect("a notification"),
            };
            assert_eq!(changed, ServerNotification::ToolsListChanged, "{era:?}");
            assert_eq!(client.list_tools().await.unwrap().len(), 2);
            client.close().await;
        }
    });
}

on_both_runtimes!(
    offers_everything_from_closures,
    asks_the_client_in_the_middle_of_a_call,
    a_slow_answer_and_a_timeout,
    errors_and_is_error_results,
    a_dropped_connection,
    list_changed_notifications,
);

/// An HTTP-shaped test: the handshake era's session expires on the server (`404` to the next
/// request in it); the client opens a new one with `initialize` and goes on.
fn a_session_that_expires(rt: Rt) {
    rt.block_on(async {
        let server = ScriptedServer::new()
            .era(ServerEra::Handshake)
            .over_http()
            .tool("add", json!({"type": "object"}), |call| async move {
                let sum = num(&call.arguments, "a") + num(&call.arguments, "b");
                Ok(ToolResult::text(&sum.to_string()))
            });
        let (client, server) = rt.connect(server, ConnectOptions::default()).await;
        let mut events = client.events();
        let r = client.call_tool("add", json!({"a": 1, "b": 2})).await;
        assert_eq!(r.unwrap().text(), "3");
        server.expire_session();
        // The call is refused `404`; the client opens a new session and sends it again.
        let r = client.call_tool("add", json!({"a": 2, "b": 40})).await;
        let wire = server.transcript();
        assert_eq!(r.unwrap().text(), "42", "{wire}");
        assert_eq!(wire.named("initialize").count(), 2, "{wire}");
        let tries: Vec<_> = wire
            .named("tools/call")
            .filter(|m| m.params().unwrap()["arguments"]["b"] == 40)
            .collect();
        assert_eq!(tries.len(), 2, "refused, then sent again: {wire}");
        assert_eq!(tries[0].id(), tries[1].id(), "{wire}");
        let renewed = wire.named("initialize").nth(1).unwrap();
        let at = |m: &mcpwire::testing::WireMessage| {
            wire.messages.iter().position(|x| std::ptr::eq(x, m))
        };
        assert!(
            at(tries[0]) < at(renewed) && at(renewed) < at(tries[1]),
            "{wire}"
        );
        let mut renewals = 0;
        while let Some(e) = futures_lite::future::poll_once(events.next())
            .await
            .flatten()
        {
            renewals += usize::from(matches!(e, mcpwire::Event::SessionRenewed(_)));
        }
        assert_eq!(renewals, 1);
        let r = client.call_tool("add", json!({"a": 5, "b": 5})).await;
        assert_eq!(r.unwrap().text(), "10");
        client.close().await;
    });
}

on_both_runtimes!(a_session_that_expires);
