//! Several callers and workers under shuttle's random scheduler, with the fake clock: every
//! caller gets its job's result, or a timeout that fired no earlier than its deadline.
//! `RUSTFLAGS="--cfg shuttle" cargo test --release -p worker-pool --test shuttle`
#![cfg(shuttle)]

use std::time::Duration;
use threadsim::{spawn, Sim};
use worker_pool::{Pool, Refused};

#[test]
fn every_caller_gets_its_result_or_a_timeout_at_its_deadline() {
    shuttle::check_random(
        || {
            let sim = Sim::new(0);
            let clock = sim.clock();
            let ticket = clock.thread_register("main");
            let pool = std::sync::Arc::new(Pool::new(&clock, 2));
            let callers: Vec<_> = (0..3u64)
                .map(|i| {
                    let (pool, sleeper) = (pool.clone(), clock.clone());
                    spawn(&clock, format!("caller-{i}"), move || {
                        let started = sleeper.now();
                        let job_clock = sleeper.clone();
                        let result = pool.run(
                            Box::new(move || {
                                job_clock.sleep(Duration::from_millis(40 * i));
                                i + 1
                            }),
                            Duration::from_millis(60),
                        );
                        match result {
                            Ok(value) => assert_eq!(value, i + 1),
                            Err(Refused::TimedOut) => assert!(
                                sleeper.now() - started >= Duration::from_millis(60),
                                "timed out early"
                            ),
                            Err(Refused::ShutDown) => panic!("shut down while running"),
                        }
                    })
                })
                .collect();
            for caller in callers {
                caller.join();
            }
            pool.shutdown();
            drop(pool);
            clock.thread_unregister(ticket);
        },
        200,
    );
}
