//! The tests' runtime axis: a test written once runs on smol and on tokio's multi-thread and
//! current_thread runtimes, each through that runtime's own entry points (`connect_smol` and
//! `connect`; `mcpwire::tokio::connect` and `connect_with_driver`).
//!
//! A test is a function `fn name(rt: &Rt)` that reaches its runtime through [`Rt`] only;
//! `on_every_runtime!(name, …)` makes one test of it per runtime (`name::smol`,
//! `name::tokio_multi_thread`, `name::tokio_current_thread`).
#![allow(dead_code)]

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use mcpwire::{Client, ConnectOptions, Driver, Error, ServerConfig};

/// One test per runtime for each function named: `fn name(rt: &Rt)` becomes a module `name`
/// with the tests `smol`, `tokio_multi_thread` and `tokio_current_thread`, each calling it with
/// its runtime.
macro_rules! on_every_runtime {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn smol() {
                super::$name(&$crate::runtimes::Rt::new($crate::runtimes::Kind::Smol))
            }

            #[test]
            fn tokio_multi_thread() {
                super::$name(&$crate::runtimes::Rt::new($crate::runtimes::Kind::TokioMultiThread))
            }

            #[test]
            fn tokio_current_thread() {
                super::$name(&$crate::runtimes::Rt::new($crate::runtimes::Kind::TokioCurrentThread))
            }
        }
    )*};
}

/// Which runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// smol: `smol::block_on`, `connect_smol`, `smol::spawn`.
    Smol,
    /// tokio's multi-thread runtime (two workers).
    TokioMultiThread,
    /// tokio's current_thread runtime.
    TokioCurrentThread,
}

impl Kind {
    /// A wake-up after `after` on this runtime's own timer, made where it is first polled, as
    /// a host's code would make it: on tokio, `tokio::time::sleep`, which panics unless polled
    /// inside a tokio runtime (a handler of the host's awaiting it shows where it runs).
    pub async fn sleep_here(self, after: Duration) {
        match self {
            Kind::Smol => {
                async_io::Timer::after(after).await;
            }
            Kind::TokioMultiThread | Kind::TokioCurrentThread => tokio::time::sleep(after).await,
        }
    }
}

/// A test's runtime.
pub struct Rt {
    kind: Kind,
    tokio: Option<Arc<tokio::runtime::Runtime>>,
}

impl Rt {
    pub fn new(kind: Kind) -> Rt {
        let mut builder = match kind {
            Kind::Smol => None,
            Kind::TokioMultiThread => {
                let mut builder = tokio::runtime::Builder::new_multi_thread();
                builder.worker_threads(2);
                Some(builder)
            }
            Kind::TokioCurrentThread => Some(tokio::runtime::Builder::new_current_thread()),
        };
        let tokio = builder
            .as_mut()
            .map(|b| Arc::new(b.enable_all().build().expect("a tokio runtime")));
        Rt { kind, tokio }
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Runs `future` to its end on this runtime, on this thread (tokio: `Runtime::block_on`).
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        match &self.tokio {
            None => smol::block_on(future),
            Some(rt) => rt.block_on(future),
        }
    }

    /// Connects with the runtime's own entry point, its driver spawned on it, and waits for the
    /// handshake (`connect_smol`, `mcpwire::tokio::connect`). Inside [`block_on`](Self::block_on).
    pub async fn connect(
        &self,
        config: &ServerConfig,
        options: ConnectOptions,
    ) -> Result<Client, Error> {
        match &self.tokio {
            None => mcpwire::connect_smol(config, options).await,
            Some(_) => mcpwire::tokio::connect(config, options).await,
        }
    }

    /// The handle and the driver, not spawned (`connect`, `mcpwire::tokio::connect_with_driver`
    /// inside the runtime's context), from any thread.
    pub fn connect_with_driver(
        &self,
        config: &ServerConfig,
        options: ConnectOptions,
    ) -> Result<(Client, Driver), Error> {
        match &self.tokio {
            None => mcpwire::connect(config, options),
            Some(rt) => {
                let _entered = rt.enter();
                mcpwire::tokio::connect_with_driver(config, options)
            }
        }
    }

    /// Spawns `future` on the runtime (smol's global executor, tokio's runtime).
    pub fn spawn<T: Send + 'static>(
        &self,
        future: impl Future<Output = T> + Send + 'static,
    ) -> Joined<T> {
        match &self.tokio {
            None => Joined::Smol(Some(smol::spawn(future))),
            Some(rt) => Joined::Tokio(rt.spawn(future)),
        }
    }

    /// A wake-up after `after` on the runtime's timer (from any thread).
    pub fn sleep(&self, after: Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        match &self.tokio {
            None => Box::pin(async move {
                async_io::Timer::after(after).await;
            }),
            Some(rt) => {
                let _entered = rt.enter();
                Box::pin(tokio::time::sleep(after))
            }
        }
    }

    /// `future`, or a panic naming `what` after `limit`.
    pub async fn within<T>(
        &self,
        limit: Duration,
        what: &str,
        future: impl Future<Output = T>,
    ) -> T {
        let timer = async {
            self.sleep(limit).await;
            panic!("{what}: not done within {limit:?}");
        };
        futures_lite::future::or(future, timer).await
    }

    /// Polls `driver` to its end on another thread, on this runtime (smol: `block_on` there;
    /// tokio: the runtime's `block_on` there).
    pub fn drive_on_thread(&self, driver: Driver) -> std::thread::JoinHandle<()> {
        match &self.tokio {
            None => std::thread::spawn(move || smol::block_on(driver)),
            Some(rt) => {
                let rt = rt.clone();
                std::thread::spawn(move || rt.block_on(driver))
            }
        }
    }

    /// Connects, then runs the driver and `body` on one executor of one thread (smol's
    /// `LocalExecutor`; tokio's current_thread runtime; on tokio's multi-thread runtime the
    /// driver is spawned on its workers), and waits for the driver's end once `body` has
    /// dropped the handle.
    pub fn with_driver_on_one_executor<F, Fut>(
        &self,
        config: &ServerConfig,
        options: ConnectOptions,
        body: F,
    ) where
        F: FnOnce(Client) -> Fut,
        Fut: Future<Output = ()>,
    {
        let (client, driver) = self.connect_with_driver(config, options).unwrap();
        match &self.tokio {
            None => {
                let ex = smol::LocalExecutor::new();
                futures_lite::future::block_on(ex.run(async {
                    let driver = ex.spawn(driver);
                    body(client).await;
                    driver.await;
                }));
            }
            Some(rt) => rt.block_on(async {
                let driver = tokio::spawn(driver);
                body(client).await;
                driver.await.unwrap();
            }),
        }
    }
}

impl Rt {
    /// A connection over a pair of byte streams (`futures`' traits), on this runtime
    /// (`connect_streams`; `mcpwire::tokio::connect_streams`, the streams seen through tokio's
    /// traits).
    pub fn connect_streams<R, W>(
        &self,
        name: &str,
        stdout: R,
        stdin: W,
        options: ConnectOptions,
    ) -> (Client, Driver)
    where
        R: futures_lite::AsyncRead + Send + 'static,
        W: futures_lite::AsyncWrite + Send + 'static,
    {
        match &self.tokio {
            None => mcpwire::connect_streams(name, stdout, stdin, options),
            Some(rt) => {
                let _entered = rt.enter();
                let (stdout, stdin) = (TokioIo(Box::pin(stdout)), TokioIo(Box::pin(stdin)));
                mcpwire::tokio::connect_streams(name, stdout, stdin, options).unwrap()
            }
        }
    }
}

impl Rt {
    /// Connects on an executor of this runtime's kind of its own (not this one: smol's
    /// `Executor`; a tokio runtime of the same flavour), the driver a task of it, run on another
    /// thread until `stop` receives, then shut down with its tasks.
    pub fn connect_on_an_executor_shut_down_later(
        &self,
        config: &ServerConfig,
        options: ConnectOptions,
        stop: smol::channel::Receiver<()>,
    ) -> (Client, std::thread::JoinHandle<()>) {
        if self.tokio.is_none() {
            let (client, driver) = mcpwire::connect(config, options).unwrap();
            let thread = std::thread::spawn(move || {
                let ex = smol::Executor::new();
                ex.spawn(driver).detach();
                smol::block_on(ex.run(async {
                    let _ = stop.recv().await;
                }));
                drop(ex);
            });
            return (client, thread);
        }
        let own = Rt::new(self.kind);
        let (client, driver) = own.connect_with_driver(config, options).unwrap();
        let own = own.tokio.expect("a tokio runtime");
        own.spawn(driver);
        let thread = std::thread::spawn(move || {
            own.block_on(async {
                let _ = stop.recv().await;
            });
            drop(own);
        });
        (client, thread)
    }
}

/// A stream of `futures`' traits seen through tokio's.
pub struct TokioIo<T>(pub Pin<Box<T>>);

impl<T: futures_lite::AsyncRead> tokio::io::AsyncRead for TokioIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let n = std::task::ready!(self.0.as_mut().poll_read(cx, buf.initialize_unfilled()))?;
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

impl<T: futures_lite::AsyncWrite> tokio::io::AsyncWrite for TokioIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.0.as_mut().poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.0.as_mut().poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.0.as_mut().poll_close(cx)
    }
}

/// A task spawned on a test's runtime: awaited for its output (a panic in it fails the test),
/// or detached.
pub enum Joined<T> {
    Smol(Option<smol::Task<T>>),
    Tokio(tokio::task::JoinHandle<T>),
}

impl<T> Joined<T> {
    /// Lets the task run on its own.
    pub fn detach(self) {
        match self {
            Joined::Smol(mut task) => task.take().expect("not awaited").detach(),
            Joined::Tokio(_) => {}
        }
    }
}

impl<T> Future for Joined<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        match self.get_mut() {
            Joined::Smol(task) => Pin::new(task.as_mut().expect("not detached")).poll(cx),
            Joined::Tokio(handle) => Pin::new(handle).poll(cx).map(|r| match r {
                Ok(out) => out,
                Err(e) => std::panic::resume_unwind(e.into_panic()),
            }),
        }
    }
}
