//! `TokioEnv` keeps the contract code written against `Env` relies on, on a
//! real tokio runtime (its clock paused, so the test is exact and instant).

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use fencesim_env::{Elapsed, Env, TokioEnv};

/// Retries `attempt` every `every` until it succeeds: the shape of a lock
/// client's acquire loop, generic over where it runs.
async fn retry<E: Env>(env: &E, every: Duration, mut attempt: impl FnMut() -> bool) -> Duration {
    while !attempt() {
        env.sleep(every).await;
    }
    env.now()
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn sleep_timeout_and_now_follow_tokios_clock() {
    let env = TokioEnv::new();
    let mut left = 3;
    let took = retry(&env, Duration::from_millis(100), || {
        left -= 1;
        left == 0
    })
    .await;
    assert_eq!(took, Duration::from_millis(200));
    let late = env
        .timeout(Duration::from_millis(10), env.sleep(Duration::from_secs(1)))
        .await;
    assert_eq!(late, Err(Elapsed));
    let in_time = env.timeout(Duration::from_secs(1), async { 7 }).await;
    assert_eq!(in_time, Ok(7));
    assert!(env.wall_ns() > 0);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn spawned_tasks_run_beside_the_caller_on_a_local_set() {
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            let env = TokioEnv::new();
            let beats = Rc::new(Cell::new(0));
            env.spawn({
                let env = env.clone();
                let beats = beats.clone();
                async move {
                    loop {
                        env.sleep(Duration::from_millis(100)).await;
                        beats.set(beats.get() + 1);
                    }
                }
            });
            env.sleep(Duration::from_millis(350)).await;
            assert_eq!(beats.get(), 3);
        })
        .await;
}

#[test]
fn jitter_stays_below_its_bound() {
    let env = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(async { TokioEnv::new() });
    for _ in 0..1000 {
        assert!(env.jitter(Duration::from_millis(50)) < Duration::from_millis(50));
    }
    assert_eq!(env.jitter(Duration::ZERO), Duration::ZERO);
}
