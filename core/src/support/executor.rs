use core::future::Future;
use core::pin::pin;
use core::task::{Context, Poll, Waker};

/// Runs a future whose storage completes every operation immediately.
///
/// Synchronous hosts (the filesystem, wasmtime imports, [`crate::InMemoryStorage`])
/// never return `Pending`, so one poll finishes the whole orchestration. Hosts whose
/// storage really waits (IndexedDB, OPFS' async API) must use an async executor
/// instead; calling this with such storage is a programming error and panics.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!(
            "mneme_core::block_on was given storage that does not complete immediately; \
             drive asynchronous storage with an async executor"
        ),
    }
}
