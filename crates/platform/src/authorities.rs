//! Finding the authority that owns a game, for its callers (the gateway,
//! the matchmaker, the ratings service).
//!
//! Games hash into [`SHARDS`] shards by id ([`shard_of`]); each shard is
//! owned by one authority instance at a time (the authority's ownership
//! module keeps the leases). A caller sends a game's call to the instance
//! it last saw answer for the game's shard, or to any configured instance.
//! An instance that knows another owns the game does not answer it: it
//! redirects the caller ([`redirect`]: UNAVAILABLE naming the owner in
//! [`OWNER_HEADER`]), and the caller sends the call there at once. Every
//! answer about a game names its owner in the same metadata, so the next
//! call goes straight there. One router, here, learns owners and retries;
//! the authorities never call each other.
//!
//! While a game has no owner (its instance died or stopped and the lease
//! has not run out yet, or it is being handed over) calls are answered
//! UNAVAILABLE; [`Authorities::call`] retries those, and transport
//! failures, with a short back-off until [`RETRY_BUDGET`] is spent, so a
//! failover that completes in time shows as a slower call. A try that has
//! no answer after [`TRY_TIMEOUT`] is abandoned and its instance is
//! suspected for [`SUSPECT_FOR`]: a stopped process keeps its connections
//! open and would hold the call for as long as it is stopped, so calls go
//! to the other instances (which redirect to the new owner once the lease
//! has moved). Named as an owner by another instance more than a try's
//! time after it was passed over, it has renewed its lease since (it was
//! continued, and given shards): it is tried again. Every retried call is
//! safe to repeat: a move names its number and a repeated one gets the
//! first answer, a game is created under the id its caller chose.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tonic::{Code, Status};
use ttakji_proto::internal::v1::authority_service_client::AuthorityServiceClient;

use crate::grpc::{self, TracedChannel};
use crate::refusal::{RETRY_AFTER_HEADER, unavailable};

/// The number of shards games hash into. Fixed: changing it moves games
/// between shards, so every authority of a deployment must agree on it.
pub const SHARDS: u32 = 64;

/// Response metadata naming the URL of the instance that owns the game.
pub const OWNER_HEADER: &str = "ttakji-owner";

/// How long [`Authorities::call`] keeps trying before it answers UNAVAILABLE.
pub const RETRY_BUDGET: Duration = Duration::from_secs(10);

/// How long one try waits for its answer before it is abandoned and sent
/// elsewhere. Far above a call's ordinary time (a store write), well under
/// a lease.
pub const TRY_TIMEOUT: Duration = Duration::from_millis(1_000);

/// How long an instance whose try was abandoned is passed over.
pub const SUSPECT_FOR: Duration = Duration::from_secs(5);

/// Redirects followed one after another before the caller backs off (two
/// instances that each name the other while a shard moves).
const REDIRECTS_AT_ONCE: u32 = 3;

/// The first wait between tries; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(25);
const MAX_BACKOFF: Duration = Duration::from_millis(400);

/// How often configured host names are looked up again.
const RESOLVE_EVERY: Duration = Duration::from_secs(10);

/// An authority client over a traced channel.
pub type AuthorityClient = AuthorityServiceClient<TracedChannel>;

/// The shard of a game: FNV-1a of its id, modulo [`SHARDS`]. Stable across
/// versions and machines (no random seed).
#[must_use]
pub fn shard_of(game_id: &str) -> u32 {
    shard_of_hash(fnv1a(FNV_OFFSET, game_id.as_bytes()))
}

/// `prefix` and the first two hex digits (of 256) that put it in `shard`,
/// as a game id chosen for a shard is made; `None` when no two do (about
/// one prefix in 55).
#[must_use]
pub fn completed_in_shard(prefix: &str, shard: u32) -> Option<String> {
    let hash = fnv1a(FNV_OFFSET, prefix.as_bytes());
    (0..=255u8)
        .map(|last| format!("{last:02x}"))
        .find(|last| shard_of_hash(fnv1a(hash, last.as_bytes())) == shard)
        .map(|last| format!("{prefix}{last}"))
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a over `bytes`, from the state `hash`.
fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

fn shard_of_hash(hash: u64) -> u32 {
    u32::try_from(hash % u64::from(SHARDS)).unwrap_or(0)
}

/// The answer of an instance about a game `owner` serves: UNAVAILABLE,
/// naming the owner in [`OWNER_HEADER`], to be asked there at once.
#[must_use]
pub fn redirect(game_id: &str, owner: &str) -> Status {
    let mut status = unavailable(
        format!("game {game_id} is served by the authority at {owner}; ask there"),
        Duration::ZERO,
    );
    if let Ok(value) = owner.parse() {
        status.metadata_mut().insert(OWNER_HEADER, value);
    }
    status
}

/// Whether a failed call may be sent again, here or elsewhere: the
/// instance was unreachable, went away mid-call (tonic says UNKNOWN, or
/// CANCELLED when the connection closed under the call, or INTERNAL with
/// an "h2 protocol error" when an instance shutting down reset the stream
/// after its headers; our servers never answer any of these themselves,
/// and our callers never cancel a call they still wait for) or said the
/// game has no owner right now. A RESOURCE_EXHAUSTED without a retry hint
/// is the transport's too (tonic's word for an HTTP/2 stream reset with
/// ENHANCE_YOUR_CALM): the authority's own limits always carry one.
#[must_use]
pub fn is_retryable(status: &Status) -> bool {
    match status.code() {
        Code::Unavailable | Code::Unknown | Code::Cancelled => true,
        Code::Internal => status.message().starts_with(TRANSPORT_RESET),
        Code::ResourceExhausted => status.metadata().get(RETRY_AFTER_HEADER).is_none(),
        _ => false,
    }
}

/// How tonic words an HTTP/2 stream the peer reset (its
/// `Status::from_hyper_error`): the connection's failure, not an answer.
const TRANSPORT_RESET: &str = "h2 protocol error";

/// A request to the authority, and the game it is about.
pub trait AboutGame {
    /// The game's id; `None` for a call about no one game (or a new game
    /// whose id the authority is to choose).
    fn game_id(&self) -> Option<&str>;
}

macro_rules! about_game {
    ($($request:ident),*) => {$(
        impl AboutGame for ttakji_proto::internal::v1::$request {
            fn game_id(&self) -> Option<&str> {
                Some(self.game_id.as_str()).filter(|id| !id.is_empty())
            }
        }
    )*};
}

about_game!(
    CreateGameRequest,
    GetGameRequest,
    SubmitActionRequest,
    SetAiEngineRequest,
    UndoMoveRequest,
    GetScorePreviewRequest,
    GetSgfRequest,
    ListEventsRequest,
    OfferDrawRequest,
    AnswerDrawRequest,
    SettleCountRequest,
    ReportPresenceRequest
);

/// A batch goes to the owner of its first game's shard: a caller keeps
/// each batch to one shard.
impl AboutGame for ttakji_proto::internal::v1::CreateGamesRequest {
    fn game_id(&self) -> Option<&str> {
        self.games
            .first()
            .map(|g| g.game_id.as_str())
            .filter(|id| !id.is_empty())
    }
}

impl AboutGame for ttakji_proto::internal::v1::ListFinishedGamesRequest {
    fn game_id(&self) -> Option<&str> {
        None
    }
}

impl AboutGame for ttakji_proto::internal::v1::ListGameSummariesRequest {
    fn game_id(&self) -> Option<&str> {
        None
    }
}

/// The authority instances a caller knows, and which one owns which shard.
#[derive(Debug, Clone)]
pub struct Authorities {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The URLs as configured; host names are looked up to every address.
    configured: Vec<String>,
    state: Mutex<State>,
    next: AtomicUsize,
    budget: Duration,
    /// How long a try may go unanswered before it is abandoned.
    try_timeout: Duration,
    key: Option<grpc::ServiceKey>,
    /// Bumped whenever a shard's owner changes, so a try waiting on the
    /// old owner can give up.
    moved: tokio::sync::watch::Sender<u64>,
}

#[derive(Debug)]
struct State {
    /// Every instance address the configured URLs resolve to.
    endpoints: Vec<String>,
    resolved_at: Option<Instant>,
    /// The owner last seen answering for each shard.
    owners: HashMap<u32, String>,
    /// Instances whose last try was abandoned, and since when: each is
    /// passed over for [`SUSPECT_FOR`] from then.
    suspects: HashMap<String, Instant>,
    channels: HashMap<String, TracedChannel>,
}

impl State {
    /// Records `owner` as the owner of `shard`: true when that changes it.
    fn own(&mut self, shard: u32, owner: &str) -> bool {
        if self.owners.get(&shard).map(String::as_str) == Some(owner) {
            return false;
        }
        self.owners.insert(shard, owner.to_owned());
        true
    }
}

impl Authorities {
    /// Callers of the authorities at `urls`: one URL or several separated
    /// by commas; a host name may resolve to several instances (a
    /// Kubernetes headless Service), and each address is one instance.
    ///
    /// # Errors
    /// When a URL is not valid.
    pub fn new(urls: &str) -> anyhow::Result<Authorities> {
        let configured: Vec<String> = urls
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(str::to_owned)
            .collect();
        if configured.is_empty() {
            anyhow::bail!("no authority URL given");
        }
        for url in &configured {
            url.parse::<http::Uri>()
                .ok()
                .filter(|u| u.host().is_some())
                .ok_or_else(|| anyhow::anyhow!("the authority URL {url:?} is not valid"))?;
        }
        Ok(Authorities::with(
            configured,
            RETRY_BUDGET,
            TRY_TIMEOUT,
            None,
        ))
    }

    fn with(
        configured: Vec<String>,
        budget: Duration,
        try_timeout: Duration,
        key: Option<grpc::ServiceKey>,
    ) -> Authorities {
        Authorities {
            inner: Arc::new(Inner {
                configured,
                state: Mutex::new(State {
                    endpoints: Vec::new(),
                    resolved_at: None,
                    owners: HashMap::new(),
                    suspects: HashMap::new(),
                    channels: HashMap::new(),
                }),
                next: AtomicUsize::new(0),
                budget,
                try_timeout,
                key,
                moved: tokio::sync::watch::Sender::new(0),
            }),
        }
    }

    /// The same instances, giving up after `budget` instead.
    #[must_use]
    pub fn with_budget(&self, budget: Duration) -> Authorities {
        Authorities::with(
            self.inner.configured.clone(),
            budget,
            self.inner.try_timeout,
            self.inner.key.clone(),
        )
    }

    /// The same instances, abandoning a try unanswered after `timeout`.
    #[must_use]
    pub fn with_try_timeout(&self, timeout: Duration) -> Authorities {
        Authorities::with(
            self.inner.configured.clone(),
            self.inner.budget,
            timeout,
            self.inner.key.clone(),
        )
    }

    /// The same instances, each call carrying the service key.
    #[must_use]
    pub fn with_service_key(&self, key: Option<grpc::ServiceKey>) -> Authorities {
        Authorities::with(
            self.inner.configured.clone(),
            self.inner.budget,
            self.inner.try_timeout,
            key,
        )
    }

    /// Follows the authorities' announcements of shards taken on `bus`
    /// until `shutdown`: calls about their games go straight to the
    /// taker, which is no longer passed over, and a try still waiting on
    /// the instance that held them is abandoned and sent there (a process
    /// stopped with SIGSTOP keeps its connections open and would hold it
    /// for the whole try).
    ///
    /// # Errors
    /// When the bus refuses the subscription.
    pub async fn follow_owners(
        &self,
        bus: &crate::bus::Bus,
        shutdown: &crate::shutdown::Shutdown,
    ) -> Result<(), crate::bus::BusError> {
        let mut announced = bus.subscribe(&crate::bus::shards_taken()).await?;
        let authorities = self.clone();
        let mut stop = shutdown.clone();
        shutdown.spawn(async move {
            loop {
                let delivery = tokio::select! {
                    () = stop.wait() => return,
                    d = announced.recv() => d,
                };
                match delivery {
                    crate::bus::Delivery::Message { message, .. } => {
                        authorities.taken(&message.owner, &message.shards);
                    }
                    // A lost announcement costs what it did before: the
                    // old owner's answer, or a try abandoned.
                    crate::bus::Delivery::Gap => {}
                    crate::bus::Delivery::Closed => return,
                }
            }
        });
        Ok(())
    }

    /// `owner` has taken `shards`: it runs, and owns them. An owner that
    /// is not one of the instances configured here is another
    /// deployment's on the same Redis, and is ignored.
    fn taken(&self, owner: &str, shards: &[u32]) {
        let mut state = self.state();
        if !state.endpoints.iter().any(|e| e == owner) {
            return;
        }
        state.suspects.remove(owner);
        let mut moved = false;
        for &shard in shards {
            moved |= state.own(shard, owner);
        }
        drop(state);
        if moved {
            self.inner.moved.send_modify(|n| *n += 1);
        }
    }

    /// Resolves once `shard` is known to be owned by another instance
    /// than `url`; never without a shard.
    async fn moved_from(&self, shard: Option<u32>, url: &str) {
        let Some(shard) = shard else {
            return std::future::pending().await;
        };
        let mut moved = self.inner.moved.subscribe();
        loop {
            if moved.changed().await.is_err() {
                return std::future::pending().await;
            }
            if self
                .state()
                .owners
                .get(&shard)
                .is_some_and(|owner| owner != url)
            {
                return;
            }
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A client of the instance at `url` (one connection per instance).
    ///
    /// # Errors
    /// When the URL is not valid.
    pub fn client(&self, url: &str) -> Result<AuthorityClient, Status> {
        let mut state = self.state();
        if let Some(channel) = state.channels.get(url) {
            return Ok(AuthorityServiceClient::new(channel.clone()));
        }
        let channel = grpc::client(url, "authority", self.inner.key.as_ref())
            .map_err(|e| Status::internal(format!("authority address: {e}")))?;
        state.channels.insert(url.to_owned(), channel.clone());
        Ok(AuthorityServiceClient::new(channel))
    }

    /// Looks the configured host names up again when due.
    async fn resolve_if_due(&self) {
        {
            let state = self.state();
            if state
                .resolved_at
                .is_some_and(|at| at.elapsed() < RESOLVE_EVERY)
                && !state.endpoints.is_empty()
            {
                return;
            }
        }
        let mut endpoints = Vec::new();
        for url in &self.inner.configured {
            endpoints.extend(resolve(url).await);
        }
        endpoints.dedup();
        let mut state = self.state();
        state.endpoints = endpoints;
        state.resolved_at = Some(Instant::now());
    }

    /// Where to send a call about `shard` next: its owner as last seen,
    /// unless suspected; otherwise the next configured instance not
    /// suspected (the next one, when every one is).
    fn target(&self, shard: Option<u32>) -> Option<String> {
        let mut state = self.state();
        let now = Instant::now();
        state
            .suspects
            .retain(|_, since| now.saturating_duration_since(*since) < SUSPECT_FOR);
        if let Some(owner) = shard.and_then(|s| state.owners.get(&s))
            && !state.suspects.contains_key(owner)
        {
            return Some(owner.clone());
        }
        let n = state.endpoints.len();
        if n == 0 {
            return None;
        }
        let start = self.inner.next.fetch_add(1, Ordering::Relaxed);
        let pick = (0..n)
            .map(|k| &state.endpoints[(start + k) % n])
            .find(|url| !state.suspects.contains_key(*url))
            .unwrap_or(&state.endpoints[start % n]);
        Some(pick.clone())
    }

    /// Records the owner `metadata` names for `shard`: true when it names
    /// one that is not suspected. An instance suspected for longer than a
    /// try lasts is named by a live one only if it has renewed its lease
    /// since (a process stopped and continued, then given shards): it is
    /// running again and no longer passed over.
    fn learn(&self, shard: Option<u32>, metadata: &tonic::metadata::MetadataMap) -> bool {
        let (Some(shard), Some(owner)) = (
            shard,
            metadata.get(OWNER_HEADER).and_then(|v| v.to_str().ok()),
        ) else {
            return false;
        };
        let mut state = self.state();
        if let Some(since) = state.suspects.get(owner) {
            if since.elapsed() < self.inner.try_timeout {
                return false;
            }
            state.suspects.remove(owner);
        }
        let moved = state.own(shard, owner);
        drop(state);
        if moved {
            self.inner.moved.send_modify(|n| *n += 1);
        }
        true
    }

    fn forget(&self, shard: Option<u32>, url: &str) {
        let mut state = self.state();
        if let Some(shard) = shard
            && state.owners.get(&shard).is_some_and(|o| o == url)
        {
            state.owners.remove(&shard);
        }
    }

    /// `url` left a try unanswered: it is passed over for [`SUSPECT_FOR`],
    /// and for every shard it was seen owning, until it answers again.
    fn suspect(&self, url: &str) {
        let mut state = self.state();
        state.suspects.insert(url.to_owned(), Instant::now());
        state.owners.retain(|_, owner| owner != url);
    }

    /// `url` answered: it is no longer suspected.
    fn answered(&self, url: &str) {
        self.state().suspects.remove(url);
    }

    /// Sends `request` with `send` to the owner of the game it is about,
    /// as [`Authorities::call`] does: `authorities.ask(request, |mut c, r|
    /// async move { c.get_game(r).await })`.
    ///
    /// # Errors
    /// As [`Authorities::call`].
    pub async fn ask<R, T, F, Fut>(&self, request: R, send: F) -> Result<tonic::Response<T>, Status>
    where
        R: AboutGame + Clone,
        F: Fn(AuthorityClient, R) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, Status>>,
    {
        self.call(request.game_id(), |client| send(client, request.clone()))
            .await
    }

    /// Sends a call about `game_id` (or about no game) to its owner,
    /// retrying while the game has no reachable owner, until the budget is
    /// spent; then UNAVAILABLE with a retry hint. Other refusals are the
    /// authority's answer and are returned as they are.
    ///
    /// # Errors
    /// The authority's refusal, or UNAVAILABLE when no owner answered in
    /// time.
    pub async fn call<T, F, Fut>(
        &self,
        game_id: Option<&str>,
        send: F,
    ) -> Result<tonic::Response<T>, Status>
    where
        F: Fn(AuthorityClient) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, Status>>,
    {
        let shard = game_id.map(shard_of);
        let give_up = Instant::now() + self.inner.budget;
        let mut backoff = FIRST_BACKOFF;
        let mut tries = 0u32;
        let mut redirects = 0u32;
        loop {
            self.resolve_if_due().await;
            // A try abandoned has waited long enough: the next goes at once.
            let mut abandoned = false;
            let last = match self.target(shard) {
                Some(url) => {
                    let client = self.client(&url)?;
                    let tried = tokio::select! {
                        answer = tokio::time::timeout(self.inner.try_timeout, send(client)) => answer,
                        () = self.moved_from(shard, &url), if redirects < REDIRECTS_AT_ONCE => {
                            // The shard has a new owner: ask it at once.
                            redirects += 1;
                            tries += 1;
                            continue;
                        }
                    };
                    match tried {
                        Ok(Ok(response)) => {
                            self.answered(&url);
                            self.learn(shard, response.metadata());
                            if tries > 0 {
                                metrics::counter!("ttakji_authority_retries_total", "outcome" => "answered")
                                    .increment(1);
                            }
                            return Ok(response);
                        }
                        Ok(Err(status)) if is_retryable(&status) => {
                            self.forget(shard, &url);
                            // A redirect: ask the owner it names at once.
                            if self.learn(shard, status.metadata()) && redirects < REDIRECTS_AT_ONCE
                            {
                                redirects += 1;
                                tries += 1;
                                continue;
                            }
                            status
                        }
                        Ok(Err(status)) => {
                            self.answered(&url);
                            return Err(status);
                        }
                        Err(_) => {
                            self.suspect(&url);
                            abandoned = true;
                            unavailable(
                                format!(
                                    "the authority at {url} did not answer within {} ms",
                                    self.inner.try_timeout.as_millis()
                                ),
                                Duration::ZERO,
                            )
                        }
                    }
                }
                None => Status::unavailable("no authority address resolves"),
            };
            redirects = 0;
            tries += 1;
            let wait = if abandoned {
                Duration::ZERO
            } else {
                retry_after(&last)
                    .filter(|hint| !hint.is_zero())
                    .unwrap_or(backoff)
                    .min(MAX_BACKOFF)
            };
            if Instant::now() + wait >= give_up {
                tracing::warn!(
                    tries,
                    code = crate::refusal::code_name(last.code()),
                    message = last.message(),
                    "authority not reachable; giving up"
                );
                metrics::counter!("ttakji_authority_retries_total", "outcome" => "gave_up")
                    .increment(1);
                return Err(unavailable(
                    format!(
                        "the game's authority did not answer in time ({}); try again",
                        last.message()
                    ),
                    Duration::from_secs(1),
                ));
            }
            tracing::debug!(
                tries,
                code = crate::refusal::code_name(last.code()),
                message = last.message(),
                "authority call retried"
            );
            tokio::time::sleep(wait).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }
}

fn retry_after(status: &Status) -> Option<Duration> {
    status
        .metadata()
        .get(RETRY_AFTER_HEADER)?
        .to_str()
        .ok()?
        .parse()
        .ok()
        .map(Duration::from_millis)
}

/// The instance URLs `url` stands for: one per address its host resolves
/// to, or `url` itself when it names an address or cannot be looked up
/// (the connection then reports the failure).
async fn resolve(url: &str) -> Vec<String> {
    let Ok(uri) = url.parse::<http::Uri>() else {
        return vec![url.to_owned()];
    };
    let Some(host) = uri.host() else {
        return vec![url.to_owned()];
    };
    if host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
        return vec![url.to_owned()];
    }
    let scheme = uri.scheme_str().unwrap_or("http");
    let port = uri
        .port_u16()
        .unwrap_or(if scheme == "https" { 443 } else { 80 });
    match tokio::net::lookup_host((host, port)).await {
        Ok(addrs) => {
            let mut urls: Vec<String> = addrs.map(|a| format!("{scheme}://{a}")).collect();
            urls.sort();
            urls.dedup();
            if urls.is_empty() {
                vec![url.to_owned()]
            } else {
                urls
            }
        }
        Err(e) => {
            tracing::warn!(url, error = %e, "authority host name not resolved");
            vec![url.to_owned()]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::refusal::resource_exhausted;

    /// A stream reset under the call is retried like a connection lost
    /// under it; an INTERNAL the server itself answered is not.
    #[test]
    fn a_stream_reset_mid_call_is_retried_and_a_server_error_is_not() {
        assert!(is_retryable(&Status::internal(
            "h2 protocol error: http2 error"
        )));
        assert!(is_retryable(&Status::cancelled("connection closed")));
        assert!(!is_retryable(&Status::internal("the store failed")));
        assert!(!is_retryable(&Status::invalid_argument(
            "h2 protocol error"
        )));
        // The authority's own limit carries a hint; the transport's does not.
        assert!(is_retryable(&Status::resource_exhausted("stream reset")));
        assert!(!is_retryable(&resource_exhausted(
            "SERVER_AI_LIMIT",
            "too many games",
            Duration::from_secs(60)
        )));
    }

    /// A server that resets every HTTP/2 stream with `reason`: its URL, and
    /// how many streams it has reset.
    async fn resetting(reason: h2::Reason) -> (String, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("port");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let resets = Arc::new(AtomicUsize::new(0));
        let counted = resets.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let counted = counted.clone();
                tokio::spawn(async move {
                    let Ok(mut connection) = h2::server::handshake(socket).await else {
                        return;
                    };
                    while let Some(Ok((_request, mut respond))) = connection.accept().await {
                        counted.fetch_add(1, Ordering::Relaxed);
                        respond.send_reset(reason);
                    }
                });
            }
        });
        (url, resets)
    }

    /// An HTTP/2 stream the authority's side resets with ENHANCE_YOUR_CALM
    /// is RESOURCE_EXHAUSTED in tonic; through the router it reaches the
    /// caller as UNAVAILABLE with a retry hint, never as a rate limit.
    #[tokio::test]
    async fn a_stream_reset_reaches_the_caller_as_unavailable_never_as_a_rate_limit() {
        let (url, resets) = resetting(h2::Reason::ENHANCE_YOUR_CALM).await;
        let export = |mut c: AuthorityClient| async move {
            c.get_sgf(ttakji_proto::internal::v1::GetSgfRequest {
                game_id: "g".into(),
            })
            .await
        };
        let authorities = Authorities::new(&url)
            .expect("valid")
            .with_budget(Duration::from_millis(300));
        let raw = export(authorities.client(&url).expect("client"))
            .await
            .expect_err("the stream is reset");
        assert_eq!(raw.code(), Code::ResourceExhausted, "{raw:?}");
        let err = authorities
            .call(Some("g"), export)
            .await
            .expect_err("every stream is reset");
        assert_eq!(err.code(), Code::Unavailable, "{err:?}");
        assert!(err.metadata().get(RETRY_AFTER_HEADER).is_some());
        assert!(resets.load(Ordering::Relaxed) >= 3, "the reset was retried");
    }

    /// A stopped instance is passed over, and a redirect naming it just
    /// after (a lease view from before it stopped) is not followed; named
    /// again later, once it has renewed since, it is tried again.
    #[tokio::test]
    async fn an_instance_passed_over_is_tried_again_once_a_live_one_names_it_later() {
        let authorities = Authorities::new("http://10.0.0.1:1,http://10.0.0.2:2").expect("valid");
        authorities.resolve_if_due().await;
        let mut named_a = tonic::metadata::MetadataMap::new();
        named_a.insert(OWNER_HEADER, "http://10.0.0.1:1".parse().expect("ascii"));
        authorities.suspect("http://10.0.0.1:1");
        assert!(!authorities.learn(Some(7), &named_a), "just passed over");
        assert_eq!(
            authorities.target(Some(7)).as_deref(),
            Some("http://10.0.0.2:2")
        );
        // Passed over for longer than a try lasts.
        authorities.state().suspects.insert(
            "http://10.0.0.1:1".to_owned(),
            Instant::now() - TRY_TIMEOUT - Duration::from_millis(10),
        );
        assert!(authorities.learn(Some(7), &named_a));
        assert_eq!(
            authorities.target(Some(7)).as_deref(),
            Some("http://10.0.0.1:1")
        );
    }

    /// A try waiting on an instance that does not answer (stopped) is
    /// given up as soon as another instance announces it has taken the
    /// game's shard, long before the try would time out.
    #[tokio::test]
    async fn a_try_on_a_silent_owner_is_abandoned_when_another_takes_the_shard() {
        // A accepts connections and never answers.
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("port");
        let a = format!("http://{}", silent.local_addr().expect("addr"));
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = silent.accept().await {
                held.push(socket);
            }
        });
        // B answers every call with a reset, and counts them.
        let (b, calls) = resetting(h2::Reason::REFUSED_STREAM).await;
        let authorities = Authorities::new(&format!("{a},{b}"))
            .expect("valid")
            .with_try_timeout(Duration::from_secs(60));
        authorities.resolve_if_due().await;
        // Another deployment's authority on the same bus is not followed.
        authorities.taken("http://10.9.9.9:1", &[3]);
        assert_eq!(authorities.state().owners.get(&3), None);
        let bus = crate::bus::Bus::in_process();
        let (_trigger, shutdown) = crate::shutdown::channel();
        authorities
            .follow_owners(&bus, &shutdown)
            .await
            .expect("follows");
        let game = "0123456789abcdef0123456789abcdef";
        let shard = shard_of(game);
        authorities.taken(&a, &[shard]);
        let caller = authorities.clone();
        let call = tokio::spawn(async move {
            caller
                .call(Some(game), |mut c| async move {
                    c.get_sgf(ttakji_proto::internal::v1::GetSgfRequest {
                        game_id: game.into(),
                    })
                    .await
                })
                .await
        });
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(calls.load(Ordering::Relaxed), 0, "waiting on A");
        bus.publish(
            &crate::bus::shards_taken(),
            &ttakji_proto::internal::v1::ShardsTaken {
                owner: b.clone(),
                shards: vec![shard],
            },
        )
        .await
        .expect("published");
        let deadline = Instant::now() + Duration::from_secs(10);
        while calls.load(Ordering::Relaxed) == 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(
            calls.load(Ordering::Relaxed) > 0,
            "the try on A was not given up for B"
        );
        call.abort();
    }

    #[test]
    fn shards_are_stable_and_spread() {
        // Fixed values: a change here moves every stored game's shard.
        assert_eq!(shard_of(""), (0xcbf2_9ce4_8422_2325_u64 % 64) as u32);
        let mut counts = [0u32; SHARDS as usize];
        for i in 0..6400 {
            counts[shard_of(&format!("{i:032x}")) as usize] += 1;
        }
        let (min, max) = (
            counts.iter().copied().min().unwrap_or(0),
            counts.iter().copied().max().unwrap_or(0),
        );
        assert!(min > 60 && max < 140, "uneven shards: {min}..{max}");
    }

    #[test]
    fn an_id_completed_in_a_shard_falls_in_it() {
        for shard in 0..SHARDS {
            let mut completed = 0;
            for n in 0..50u32 {
                let prefix = format!("{n:030x}");
                if let Some(id) = completed_in_shard(&prefix, shard) {
                    assert_eq!(id.len(), 32);
                    assert!(id.starts_with(&prefix));
                    assert_eq!(shard_of(&id), shard, "{id}");
                    completed += 1;
                }
            }
            assert!(completed >= 45, "shard {shard}: {completed} of 50 prefixes");
        }
    }

    #[test]
    fn urls_are_checked_and_split() {
        assert!(Authorities::new("").is_err());
        assert!(Authorities::new("not a url").is_err());
        let a = Authorities::new("http://a:1, http://b:2").expect("valid");
        assert_eq!(a.inner.configured, ["http://a:1", "http://b:2"]);
    }

    #[tokio::test]
    async fn a_name_resolves_to_every_address_and_an_address_to_itself() {
        assert_eq!(resolve("http://127.0.0.1:5").await, ["http://127.0.0.1:5"]);
        let local = resolve("http://localhost:7").await;
        assert!(
            local
                .iter()
                .any(|u| u == "http://127.0.0.1:7" || u == "http://[::1]:7"),
            "{local:?}"
        );
    }

    #[tokio::test]
    async fn an_unreachable_authority_is_unavailable_with_a_hint_after_the_budget() {
        // A port nothing listens on: every try is refused at once.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("port");
        let addr = listener.local_addr().expect("addr");
        drop(listener);
        let authorities = Authorities::new(&format!("http://{addr}"))
            .expect("valid")
            .with_budget(Duration::from_millis(300));
        let err = authorities
            .call(Some("g"), |mut c| async move {
                c.get_sgf(ttakji_proto::internal::v1::GetSgfRequest {
                    game_id: "g".into(),
                })
                .await
            })
            .await
            .expect_err("nothing listens");
        assert_eq!(err.code(), Code::Unavailable, "{err:?}");
        assert!(err.metadata().get(RETRY_AFTER_HEADER).is_some());
    }
}
