//! The lock client in production: on a tokio runtime, two clients against
//! the in-process stand-in services (`cargo run -p async-lock-client --bin async-lock-client`).

use std::rc::Rc;
use std::time::Duration;

use async_lock_client::memory::{MemoryLock, MemoryStorage};
use async_lock_client::{lead, Config};
use fencesim_env::TokioEnv;

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a tokio runtime");
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async {
        let env = TokioEnv::new();
        let lock = Rc::new(MemoryLock::new(env.clone(), Duration::from_millis(300), 33));
        let storage = MemoryStorage::default();
        let config = Config {
            writes: 3,
            work: Duration::from_millis(20),
            retry: Duration::from_millis(50),
        };
        let first = lead(&env, &lock, &storage, &config);
        let second = lead(&env, &lock, &storage, &config);
        let (first, second) = tokio::join!(first, second);
        println!("client1: {first:?}");
        println!("client2: {second:?}");
        let (value, writes) = storage.contents();
        println!("storage: x = {value} after {writes} writes");
    });
}
