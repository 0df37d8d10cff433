//! The pool on real threads under the fake clock: jobs that take simulated seconds finish at
//! once in real time, and a caller's timeout fires exactly when simulated time reaches it.
#![cfg(not(any(loom, shuttle)))]

use std::time::Duration;
use threadsim::simulation::simulate_on_threads;
use threadsim::spawn;
use worker_pool::{Pool, Refused};

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn a_job_of_simulated_seconds_finishes_at_once_and_a_slow_one_times_out_on_time() {
    #[allow(clippy::disallowed_methods)] // the real time the test takes
    let wall = std::time::Instant::now();
    simulate_on_threads(1, secs(10), |sim| {
        let clock = sim.clock();
        let pool = Pool::new(&clock, 2);
        let started = clock.now();
        let sleeper = clock.clone();
        let fast = pool.run(
            Box::new(move || {
                sleeper.sleep(secs(5));
                7
            }),
            secs(10),
        );
        assert_eq!(fast, Ok(7));
        assert_eq!(clock.now() - started, secs(5));
        let sleeper = clock.clone();
        let slow = pool.run(
            Box::new(move || {
                sleeper.sleep(secs(60));
                8
            }),
            secs(10),
        );
        assert_eq!(slow, Err(Refused::TimedOut));
        assert_eq!(
            clock.now() - started,
            secs(15),
            "the timeout fired at its deadline"
        );
        pool.shutdown();
        assert_eq!(
            clock.now() - started,
            secs(65),
            "shutdown waited for the running job"
        );
        assert_eq!(pool.run(Box::new(|| 9), secs(1)), Err(Refused::ShutDown));
    })
    .expect("the simulation passes");
    assert!(
        wall.elapsed() < secs(5),
        "65 simulated seconds took {:?}",
        wall.elapsed()
    );
}

#[test]
fn callers_on_several_threads_each_get_their_own_result() {
    simulate_on_threads(2, secs(10), |sim| {
        let clock = sim.clock();
        let pool = std::sync::Arc::new(Pool::new(&clock, 3));
        let callers: Vec<_> = (0..6u64)
            .map(|i| {
                let (pool, sleeper) = (pool.clone(), clock.clone());
                spawn(&clock, format!("caller-{i}"), move || {
                    pool.run(
                        Box::new(move || {
                            sleeper.sleep(Duration::from_millis(10 * i));
                            i * i
                        }),
                        secs(1),
                    )
                })
            })
            .collect();
        let results: Vec<_> = callers.into_iter().map(|caller| caller.join()).collect();
        assert_eq!(results, (0..6u64).map(|i| Ok(i * i)).collect::<Vec<_>>());
        pool.shutdown();
    })
    .expect("the simulation passes");
}
