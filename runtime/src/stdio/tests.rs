//! The transport's protocol logic, driven through `new_for_testing`.

use std::sync::Mutex as StdMutex;

use serde_json::json;
use tokio::sync::mpsc;

use super::*;

/// A test transport and what it sends.
fn testing(options: StdioBuilder) -> (Arc<StdioTransport>, mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (
        Arc::new(StdioTransport::new_for_testing_with(tx, options)),
        rx,
    )
}

fn quick() -> StdioBuilder {
    StdioTransport::builder().rpc_timeout(Duration::from_secs(5))
}

async fn sent(rx: &mut mpsc::UnboundedReceiver<String>) -> Value {
    let text = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("something was sent")
        .expect("the sink is open");
    serde_json::from_str(&text).unwrap()
}

/// Starts a call on its own task and returns it with the request it sent.
async fn start_call(
    transport: &Arc<StdioTransport>,
    rx: &mut mpsc::UnboundedReceiver<String>,
    method: &str,
) -> (tokio::task::JoinHandle<Result<Value, RpcError>>, Value) {
    let caller = transport.clone();
    let method_owned = method.to_owned();
    let call = tokio::spawn(async move { caller.call(&method_owned, json!({"x": 1})).await });
    let request = sent(rx).await;
    (call, request)
}

#[tokio::test]
async fn a_call_sends_a_request_and_gets_the_matching_result() {
    let (transport, mut rx) = testing(quick());
    let (call, request) = start_call(&transport, &mut rx, "add").await;
    assert_eq!(
        request,
        json!({"jsonrpc": "2.0", "id": 1, "method": "add", "params": {"x": 1}})
    );
    transport
        .receive_line(r#"{"jsonrpc":"2.0","id":1,"result":{"sum":3}}"#)
        .await;
    assert_eq!(call.await.unwrap().unwrap(), json!({"sum": 3}));
    let (call, request) = start_call(&transport, &mut rx, "next").await;
    assert_eq!(request["id"], 2, "ids increase");
    // The peer echoes the id as a string.
    transport.receive_line(r#"{"id":"2","result":null}"#).await;
    assert_eq!(call.await.unwrap().unwrap(), Value::Null);
}

#[tokio::test]
async fn responses_out_of_order_reach_their_own_calls() {
    let (transport, mut rx) = testing(quick());
    let mut calls = Vec::new();
    for i in 0..5 {
        let (call, request) = start_call(&transport, &mut rx, &format!("m{i}")).await;
        calls.push((call, request["id"].as_i64().unwrap()));
    }
    for (_, id) in calls.iter().rev() {
        transport
            .receive_line(&json!({"jsonrpc": "2.0", "id": id, "result": id * 10}).to_string())
            .await;
    }
    for (call, id) in calls {
        assert_eq!(call.await.unwrap().unwrap(), json!(id * 10));
    }
}

#[tokio::test]
async fn an_error_response_is_a_remote_error_with_its_data() {
    let (transport, mut rx) = testing(quick());
    let (call, _) = start_call(&transport, &mut rx, "boom").await;
    transport
        .receive_line(
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad x","data":{"field":"x"}}}"#,
        )
        .await;
    let err = call.await.unwrap().unwrap_err();
    let RpcError::Remote {
        code,
        message,
        data,
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!(
        (*code, message.as_str(), data.clone()),
        (-32602, "bad x", Some(json!({"field": "x"})))
    );
    assert_eq!(err.to_string(), "bad x (error -32602)");
}

#[tokio::test]
async fn junk_lines_are_skipped_and_the_transport_goes_on() {
    let (transport, mut rx) = testing(quick());
    let (call, _) = start_call(&transport, &mut rx, "m").await;
    for junk in [
        "",
        "   ",
        "not json at all",
        "{\"half\": ",
        "42",
        "[1, 2]",
        r#"{"jsonrpc":"2.0"}"#,
        r#"{"id": 99, "result": "for nobody"}"#,
        r#"{"id": {"odd": true}, "result": 1}"#,
        r#"{"id": 1, "error": "not an object"}"#,
    ] {
        transport.receive_line(junk).await;
    }
    let err = call.await.unwrap().unwrap_err();
    assert!(
        matches!(&err, RpcError::Protocol(m) if m.contains("not a JSON-RPC error object")),
        "the last junk line answered id 1 with a malformed error: {err}"
    );
    // A batch of responses, with CRLF line endings.
    let (first, _) = start_call(&transport, &mut rx, "a").await;
    let (second, _) = start_call(&transport, &mut rx, "b").await;
    transport
        .receive_line("[{\"id\":2,\"result\":\"a\"},{\"id\":3,\"result\":\"b\"}]\r")
        .await;
    assert_eq!(first.await.unwrap().unwrap(), "a");
    assert_eq!(second.await.unwrap().unwrap(), "b");
}

#[tokio::test]
async fn closing_fails_every_waiting_call_at_once_and_every_later_one() {
    let (transport, mut rx) = testing(quick().rpc_timeout(Duration::from_secs(600)));
    let mut calls = Vec::new();
    for i in 0..10 {
        calls.push(start_call(&transport, &mut rx, &format!("m{i}")).await.0);
    }
    transport.receive_close("the peer exited with code 3");
    for call in calls {
        let err = tokio::time::timeout(Duration::from_secs(5), call)
            .await
            .expect("failed at once, not at the timeout")
            .unwrap()
            .unwrap_err();
        assert!(
            matches!(&err, RpcError::Closed { reason, .. } if reason == "the peer exited with code 3"),
            "{err}"
        );
    }
    let err = transport.call("later", Value::Null).await.unwrap_err();
    assert!(matches!(err, RpcError::Closed { .. }), "{err}");
    let err = transport.notify("later", Value::Null).await.unwrap_err();
    assert!(matches!(err, RpcError::Closed { .. }), "{err}");
    assert!(transport.is_closed());
}

// Paused time: the timeouts elapse without waiting.
#[tokio::test(start_paused = true)]
async fn ten_thousand_timeouts_leave_no_pending_entry() {
    let (transport, mut rx) = testing(quick());
    for _ in 0..10_000 {
        let err = transport
            .call_with_timeout("slow", Value::Null, Duration::from_millis(1))
            .await
            .unwrap_err();
        assert!(matches!(err, RpcError::Timeout { .. }), "{err}");
    }
    assert_eq!(transport.shared.lock_pending().calls.len(), 0);
    // Given up on, but a call dropped while waiting also frees its slot.
    let (call, _) = start_call(&transport, &mut rx, "dropped").await;
    call.abort();
    let _ = call.await;
    assert_eq!(transport.shared.lock_pending().calls.len(), 0);
    // A late answer to a timed-out call is dropped quietly.
    transport.receive_line(r#"{"id": 1, "result": 1}"#).await;
}

#[tokio::test]
async fn a_timed_out_call_sends_the_configured_cancel_notice() {
    for (notice, expected) in [
        (
            CancelNotice::CancelRequest,
            Some(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}})),
        ),
        (
            CancelNotice::Cancelled,
            Some(
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": 1, "reason": "`slow` timed out"}}),
            ),
        ),
        (CancelNotice::None, None),
    ] {
        let (transport, mut rx) = testing(quick().cancel_notice(notice));
        let err = transport
            .call_with_timeout("slow", Value::Null, Duration::from_millis(20))
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "`slow` got no response within 20ms",
            "{notice:?}"
        );
        assert_eq!(sent(&mut rx).await["method"], "slow");
        match expected {
            Some(expected) => assert_eq!(sent(&mut rx).await, expected, "{notice:?}"),
            None => assert!(rx.try_recv().is_err(), "nothing more for {notice:?}"),
        }
    }
}

#[tokio::test]
async fn the_jsonrpc_field_can_be_left_out() {
    let (transport, mut rx) = testing(quick().omit_jsonrpc_field(true));
    transport.notify("hello", json!([1])).await.unwrap();
    assert_eq!(
        sent(&mut rx).await,
        json!({"method": "hello", "params": [1]})
    );
    transport.notify("bare", Value::Null).await.unwrap();
    assert_eq!(
        sent(&mut rx).await,
        json!({"method": "bare"}),
        "null params are left out"
    );
    transport.respond(7, json!("ok")).unwrap();
    assert_eq!(sent(&mut rx).await, json!({"id": 7, "result": "ok"}));
}

#[tokio::test]
async fn requests_go_to_the_async_handler_and_keep_their_id() {
    let (transport, mut rx) = testing(quick());
    transport.set_request_handler(|request: IncomingRequest| {
        if request.method == "early" {
            panic!("the handler panics before making its future");
        }
        async move {
            match request.method.as_str() {
                "double" => Ok(json!(request.params["n"].as_i64().unwrap_or(0) * 2)),
                "fail" => Err(ResponseError::invalid_params("no n").with_data(json!({"n": null}))),
                _ => panic!("the handler panics"),
            }
        }
    });
    for id in [json!(0), json!("req-1"), Value::Null] {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": "double", "params": {"n": 21}});
        transport.receive_line(&line.to_string()).await;
        assert_eq!(
            sent(&mut rx).await,
            json!({"jsonrpc": "2.0", "id": id, "result": 42}),
            "{id}"
        );
    }
    for (method, error) in [
        (
            "fail",
            json!({"code": -32602, "message": "no n", "data": {"n": null}}),
        ),
        (
            "explode",
            json!({"code": -32603, "message": "the handler of `explode` panicked"}),
        ),
        (
            "early",
            json!({"code": -32603, "message": "the handler of `early` panicked"}),
        ),
    ] {
        let line = json!({"jsonrpc": "2.0", "id": method, "method": method});
        transport.receive_line(&line.to_string()).await;
        assert_eq!(
            sent(&mut rx).await,
            json!({"jsonrpc": "2.0", "id": method, "error": error})
        );
    }
}

#[tokio::test]
async fn past_the_admission_limit_requests_are_answered_busy() {
    let (transport, mut rx) = testing(quick().max_concurrent_requests(1));
    let release = Arc::new(tokio::sync::Notify::new());
    let held = release.clone();
    transport.set_request_handler(move |_: IncomingRequest| {
        let held = held.clone();
        async move {
            held.notified().await;
            Ok(Value::Null)
        }
    });
    // One running and fifteen waiting are admitted; the seventeenth is not.
    for id in 0..17 {
        transport
            .receive_line(&json!({"id": id, "method": "hold"}).to_string())
            .await;
    }
    assert_eq!(
        sent(&mut rx).await,
        json!({"jsonrpc": "2.0", "id": 16, "error": {"code": SERVER_BUSY,
               "message": "too many requests in progress; `hold` was not run"}})
    );
    for _ in 0..16 {
        release.notify_one();
        assert_eq!(sent(&mut rx).await["result"], Value::Null);
    }
}

#[tokio::test]
async fn a_slow_request_handler_does_not_stall_reading() {
    let (transport, mut rx) = testing(quick());
    let release = Arc::new(tokio::sync::Notify::new());
    let held = release.clone();
    transport.set_request_handler(move |request: IncomingRequest| {
        let held = held.clone();
        async move {
            if request.method == "slow" {
                held.notified().await;
            }
            Ok(json!(request.method))
        }
    });
    transport.receive_line(r#"{"id":1,"method":"slow"}"#).await;
    transport.receive_line(r#"{"id":2,"method":"fast"}"#).await;
    assert_eq!(sent(&mut rx).await["id"], 2, "answered while `slow` runs");
    release.notify_one();
    assert_eq!(sent(&mut rx).await["id"], 1);
}

#[tokio::test]
async fn without_a_request_handler_requests_reach_the_notification_handler() {
    let (transport, mut rx) = testing(quick());
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let log = seen.clone();
    transport.set_notification_handler(Arc::new(move |message| {
        log.lock().unwrap().push(message);
        Ok(())
    }));
    transport
        .receive_line(r#"{"jsonrpc":"2.0","method":"session/update","params":{"n":1}}"#)
        .await;
    transport
        .receive_line(r#"{"jsonrpc":"2.0","id":"p-1","method":"session/request_permission"}"#)
        .await;
    let seen_now = seen.lock().unwrap().clone();
    assert_eq!(seen_now.len(), 2);
    assert_eq!(seen_now[0]["params"]["n"], 1);
    transport
        .respond_to(seen_now[1]["id"].clone(), json!({"ok": true}))
        .unwrap();
    assert_eq!(
        sent(&mut rx).await,
        json!({"jsonrpc": "2.0", "id": "p-1", "result": {"ok": true}})
    );
    transport.respond_error(3, -32000, "denied").unwrap();
    assert_eq!(
        sent(&mut rx).await,
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32000, "message": "denied"}})
    );
}

#[tokio::test]
async fn a_failing_or_panicking_notification_handler_does_not_stop_the_transport() {
    let (transport, mut rx) = testing(quick());
    transport.set_notification_handler(Arc::new(|message| {
        if message["method"] == "panic" {
            panic!("handler bug");
        }
        Err("not today".into())
    }));
    transport.receive_line(r#"{"method":"panic"}"#).await;
    transport.receive_line(r#"{"method":"fail"}"#).await;
    let (call, _) = start_call(&transport, &mut rx, "still").await;
    transport.receive_line(r#"{"id":1,"result":"here"}"#).await;
    assert_eq!(call.await.unwrap().unwrap(), "here");
}

#[tokio::test]
async fn with_no_handler_a_request_is_answered_method_not_found() {
    let (transport, mut rx) = testing(quick());
    transport
        .receive_line(r#"{"jsonrpc":"2.0","id":4,"method":"fs/read_text_file"}"#)
        .await;
    assert_eq!(
        sent(&mut rx).await,
        json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32601,
               "message": "method `fs/read_text_file` is not handled here"}})
    );
    // A notification with no handler is dropped, not answered.
    transport.receive_line(r#"{"method":"note"}"#).await;
    assert!(rx.try_recv().is_err());
}
