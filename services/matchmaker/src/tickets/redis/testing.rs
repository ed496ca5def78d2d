//! A Redis store of its own for each test: a fresh namespace on the tests'
//! Redis (a throwaway server unless `TTAKJI_TEST_REDIS_URL` names one), and
//! every key under it deleted afterwards, whether the test passed or failed.

use std::future::Future;

use super::RedisTickets;

/// Runs `case` on a Redis store of its own, then deletes every key it wrote.
pub(in crate::tickets) async fn on_redis<F, Fut>(case: F)
where
    F: FnOnce(RedisTickets) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let namespace = format!("ttakji-test:mm:{}:", uuid::Uuid::new_v4().simple());
    let store = RedisTickets::connect(ttakji_test_support::redis_url(), &namespace)
        .await
        .expect("the tests' Redis");
    let outcome = tokio::spawn(case(store)).await;
    forget(&namespace).await;
    if let Err(failed) = outcome {
        std::panic::resume_unwind(failed.into_panic());
    }
}

async fn forget(namespace: &str) {
    let mut conn =
        ttakji_platform::redis_target::RedisTarget::parse(ttakji_test_support::redis_url())
            .expect("redis url")
            .connection()
            .await
            .expect("redis");
    let mut cursor = 0_u64;
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(format!("{namespace}*"))
            .arg("COUNT")
            .arg(1000)
            .query_async(&mut conn)
            .await
            .expect("scan");
        if !keys.is_empty() {
            let _: i64 = redis::cmd("DEL")
                .arg(&keys)
                .query_async(&mut conn)
                .await
                .expect("del");
        }
        if next == 0 {
            break;
        }
        cursor = next;
    }
}
