//! The connection target over fixed inputs, hand-written sessions and pseudo-random inputs.

use super::connection;
use crate::test_support::Rng;

#[test]
fn connection_takes_empty_and_tiny_inputs() {
    for data in [
        &[][..],
        &[0],
        &[1],
        &[0, 0],
        &[1, 0, 0],
        &[255; 3],
        &[254, 255, 23, 215],
    ] {
        connection(data);
    }
}

/// Inputs that once broke an invariant, kept so they never do again.
#[test]
fn connection_holds_on_inputs_that_once_failed() {
    // A session renewal that gave up and closed the connection left the close without its
    // grace: what the close queued after was never given up, and the connection never
    // finished.
    connection(include_bytes!("regressions/renewal-gave-up.bin"));
    // A stateless-era request whose params held a member of an unexpected type lost its
    // `MCP-Protocol-Version` header with the rest (a debug assertion caught it).
    connection(include_bytes!("regressions/stateless-params.bin"));
    // An exchange whose head deadline passed was aborted twice.
    connection(include_bytes!("regressions/exchange-deadline.bin"));
    // Several exchanges in a session passed their deadlines at once: one lost the session
    // after another's failure had already sent a request again in it.
    connection(include_bytes!(
        "regressions/deadlines-in-a-lost-session.bin"
    ));
    // A task whose poll came due while the request of its call was still being sent.
    connection(include_bytes!("regressions/task-deadline.bin"));
    // A task cancelled with `tasks/cancel` leaves that request pending after its call ended
    // (counted as its own, not as a leak).
    connection(include_bytes!("regressions/task-cancel.bin"));
    connection(include_bytes!("regressions/task-leak.bin"));
    connection(include_bytes!("regressions/task-leak-2.bin"));
    // The standalone stream, refused for want of authorization, was opened again in its old
    // session after that session was lost.
    connection(include_bytes!("regressions/auth-standalone.bin"));
    // An HTTP connection was not finished after its close and every deadline: a driver
    // waiting on it would never end.
    connection(include_bytes!("regressions/never-finished.bin"));
    // After a close whose grace had passed, an answer still queued behind the gate went out,
    // its POST was answered with a stream, and nothing could end it.
    connection(include_bytes!("regressions/closed-mid-input.bin"));
    // A re-issue of a call the connection made for itself (no host's command returned it)
    // was told to the host as `Event::CallReissued`.
    connection(include_bytes!(
        "regressions/reissue-of-the-connections-own-call.bin"
    ));
}

/// Hand-written sessions: the handshake answered well, calls with progress, answers (a
/// list with a cursor, an `input_required` round), server requests answered, a cancel, a
/// notification, time, a batch; for each transport and era, and each way of ending.
#[test]
fn connection_covers_hand_written_sessions() {
    // flags: bit 0 HTTP, bits 1-2 the era, bit 5 the standalone stream.
    for flags in [0x00, 0x02, 0x04, 0x01, 0x03, 0x05, 0x21, 0x23] {
        for extra in [0x00, 0x08, 0x10, 0x1C, 0x24] {
            let mut data = vec![flags, extra];
            // The handshake, answered well (twice: a probe's answer may lead to
            // `initialize`), a handshake-era probe answer, then the good one.
            data.extend([22, 0x00, 0x00, 22, 0x00, 0x00]);
            if flags & 1 != 0 {
                // A notification POST accepted: 202 and the end.
                data.extend([8, 0x00, 0x03, 9, 0x00]);
            }
            // Two tool calls (one with progress), a list.
            data.extend([11, 0x24, 0, 12, 0x04, 1, 13, 0x04, 0]);
            // Progress for the first call, then its answer.
            data.extend([0, 4, 7, 0, 0x00, 1, 1, 0, 0, 0x00]);
            // An `input_required` round for the second, its input answered.
            data.extend([1, 1, 3, 0x01, 0x00, 16, 0]);
            // A list page with a cursor, the retried call's answer, the last page.
            data.extend([1, 1, 0, 0, 0x00, 1, 1, 0, 0, 0x00, 1, 1, 8, 0, 0x00]);
            // A server request, answered; a call, cancelled; a notification; time.
            data.extend([2, 5, 0, 3, 0x00, 16, 0x00, 11, 0x04, 2, 15, 3, 17, 0x02]);
            data.extend([18, 0x10, 0x00, 20]);
            // A batch (progress and noise), and noise.
            data.extend([4, 8, 0, 0, 4, 0, 0, 9, 1, 0, 0x00, 5, 9, 2, 0, 0x00]);
            connection(&data);
            // The same, closed by the application before the end.
            data.push(255);
            connection(&data);
        }
    }
}

/// Hand-written sessions of the tasks the client runs for the server: an elicitation and a
/// sampling asked as tasks, `tasks/get`, a `tasks/result` waiting, the answer, `tasks/list`,
/// a `tasks/cancel` of an ended task, time up to the TTLs; over stdio and HTTP, closed by the
/// application or not.
#[test]
fn connection_covers_tasks_run_for_the_server() {
    // flags: the handshake era (bits 1-2), stdio or HTTP (bit 0), small caps (bit 4).
    for flags in [0x02, 0x03, 0x12] {
        let mut data = vec![flags, 0x00];
        data.extend([22, 0x00, 0x00, 22, 0x00, 0x00]);
        if flags & 1 != 0 {
            data.extend([8, 0x00, 0x03, 9, 0x00]);
        }
        // An elicitation as a task (server id 0), then tasks/get and tasks/result of task-1.
        data.extend([
            0, 5, 0, 0x10, 0x00, 0, 5, 6, 0x11, 0x00, 0, 5, 6, 0x52, 0x00,
        ]);
        // A sampling as a task with a TTL (server id 5), a third request past small caps.
        data.extend([0, 5, 2, 0xF5, 0x00, 0, 5, 0, 0x36, 0x00]);
        // The first answered: task-1 completes, its waiting tasks/result is answered.
        data.extend([16, 0x00]);
        // tasks/list, a cursor, tasks/cancel of the ended task-1 and of task-2.
        data.extend([
            0, 5, 6, 0xB3, 0x00, 0, 5, 6, 0xD4, 0x00, 0, 5, 6, 0x94, 0x00,
        ]);
        data.extend([0, 5, 14, 0x95, 0x00]);
        // Time, to the tasks' ends.
        data.extend([20, 20, 20]);
        connection(&data);
        data.push(255);
        connection(&data);
    }
}

#[test]
fn connection_holds_its_invariants_on_pseudo_random_inputs() {
    let mut rng = Rng(0x00C0_FFEE_D00D_F00D);
    for round in 0..2000 {
        let len = (rng.next() % 700) as usize;
        let mut data: Vec<u8> = (0..len).map(|_| (rng.next() >> 24) as u8).collect();
        if round % 2 == 0 && data.len() > 2 {
            // Half of them past the handshake, so that the random part meets a ready
            // connection.
            let good = [22, 0x00, 0x00, 22, 0x00, 0x00];
            data.splice(2..2, good);
        }
        let result = std::panic::catch_unwind(|| connection(&data));
        assert!(result.is_ok(), "round {round}: input {data:?}");
    }
}
