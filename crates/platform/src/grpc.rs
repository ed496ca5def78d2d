//! gRPC plumbing every service shares: the server (health, reflection, the
//! observed layer, browsers), a client interceptor that passes the trace
//! on, the service key, and the status codes a client may rely on. (Ids
//! from the wire are checked in `ttakji_proto::ids`.)

use tonic::{Request, Status};

/// The metadata an internal call carries its service key in.
pub const SERVICE_KEY_HEADER: &str = "ttakji-service-key";

/// The secret the services share: every call to an internal service
/// (authority, matchmaker, ratings) carries it, and one without it is
/// UNAUTHENTICATED. At least 16 characters, visible ASCII.
#[derive(Clone, PartialEq, Eq)]
pub struct ServiceKey(std::sync::Arc<str>);

impl std::fmt::Debug for ServiceKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServiceKey(…)")
    }
}

impl std::str::FromStr for ServiceKey {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text.len() < 16 || !text.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(
                "a service key is at least 16 visible ASCII characters, with no spaces".into(),
            );
        }
        Ok(ServiceKey(std::sync::Arc::from(text)))
    }
}

impl ServiceKey {
    /// A fresh random key, for services in one process.
    #[must_use]
    pub fn random() -> ServiceKey {
        let key = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        ServiceKey(std::sync::Arc::from(key.as_str()))
    }

    /// Whether `offered` is this key, compared in constant time.
    #[must_use]
    pub fn admits(&self, offered: &[u8]) -> bool {
        let key = self.0.as_bytes();
        key.len() == offered.len()
            && key
                .iter()
                .zip(offered)
                .fold(0u8, |diff, (a, b)| diff | (a ^ b))
                == 0
    }

    fn header(&self) -> Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>> {
        self.0.parse().ok()
    }
}

/// A server interceptor that refuses a call without the service key.
#[derive(Debug, Clone)]
pub struct RequireServiceKey(pub ServiceKey);

impl tonic::service::Interceptor for RequireServiceKey {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        match request.metadata().get(SERVICE_KEY_HEADER) {
            Some(offered) if self.0.admits(offered.as_bytes()) => Ok(request),
            Some(_) => Err(Status::unauthenticated("the service key is wrong")),
            None => Err(Status::unauthenticated(
                "this is an internal service: calls carry the service key",
            )),
        }
    }
}

/// A client interceptor that writes the current trace context into every
/// outgoing request, so the callee's spans join the caller's trace, and the
/// service key when there is one.
#[derive(Debug, Clone, Default)]
pub struct PropagateTrace {
    key: Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>,
}

impl tonic::service::Interceptor for PropagateTrace {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        crate::telemetry::inject_into_metadata(request.metadata_mut());
        if let Some(key) = &self.key {
            request
                .metadata_mut()
                .insert(SERVICE_KEY_HEADER, key.clone());
        }
        Ok(request)
    }
}

/// Rewrites tonic's answer to a message over the size limit (OUT_OF_RANGE,
/// sent before any handler runs) as INVALID_ARGUMENT: for a client, an
/// oversized request is a malformed one. Our handlers never answer
/// OUT_OF_RANGE themselves, so nothing else is touched.
pub fn oversized_is_invalid_argument<B>(mut response: http::Response<B>) -> http::Response<B> {
    let out_of_range = http::HeaderValue::from_static("11");
    if response.headers().get("grpc-status") == Some(&out_of_range) {
        response
            .headers_mut()
            .insert("grpc-status", http::HeaderValue::from_static("3"));
    }
    response
}

/// Rewrites the answers tonic makes of a broken connection to a service
/// behind this one as UNAVAILABLE with a retry hint: UNKNOWN ("transport
/// error"), CANCELLED (the connection closed under the call), INTERNAL
/// "h2 protocol error" (a stream reset), and RESOURCE_EXHAUSTED without a
/// retry hint (a stream reset with ENHANCE_YOUR_CALM). Our handlers answer
/// none of these themselves, and our rate limits always give a hint, so a
/// client reads RESOURCE_EXHAUSTED only as its own limit and retries the
/// rest, as gRPC's own retry policy advises for UNAVAILABLE.
pub fn transport_failure_is_unavailable<B>(mut response: http::Response<B>) -> http::Response<B> {
    let headers = response.headers();
    let broken = match headers.get("grpc-status").map(http::HeaderValue::as_bytes) {
        Some(b"1" | b"2") => true,
        Some(b"8") => !headers.contains_key(crate::refusal::RETRY_AFTER_HEADER),
        Some(b"13") => headers
            .get("grpc-message")
            .and_then(|m| m.to_str().ok())
            .is_some_and(|m| m.replace("%20", " ").starts_with("h2 protocol error")),
        _ => false,
    };
    if broken {
        metrics::counter!("grpc_unknown_rewritten_total").increment(1);
        let headers = response.headers_mut();
        headers.insert("grpc-status", http::HeaderValue::from_static("14"));
        if !headers.contains_key(crate::refusal::RETRY_AFTER_HEADER) {
            headers.insert(
                crate::refusal::RETRY_AFTER_HEADER,
                http::HeaderValue::from_static("500"),
            );
        }
    }
    response
}

/// The status codes a client of ours may rely on: see
/// [`oversized_is_invalid_argument`], [`undecodable_is_invalid_argument`]
/// and [`transport_failure_is_unavailable`]; and a reason in every refusal
/// ([`with_a_reason`]).
pub fn answered_codes<B>(response: http::Response<B>) -> http::Response<B> {
    with_a_reason(transport_failure_is_unavailable(
        undecodable_is_invalid_argument(oversized_is_invalid_argument(response)),
    ))
}

/// Gives a refusal that names no reason of its own (tonic's, or one made
/// without [`crate::refusal::refused`]) its code's reason
/// ([`crate::refusal::code_reason`]), so that every answer that starts with
/// a status other than OK carries a `google.rpc.ErrorInfo`.
pub fn with_a_reason<B>(mut response: http::Response<B>) -> http::Response<B> {
    let refused = response
        .headers()
        .get("grpc-status")
        .is_some_and(|s| s.as_bytes() != b"0");
    if refused
        && !response.headers().contains_key("grpc-status-details-bin")
        && let Some(status) = tonic::Status::from_header_map(response.headers())
    {
        let _ = crate::refusal::with_code_reason(status).add_header(response.headers_mut());
    }
    response
}

/// A request that is not the message it should be (bytes that do not
/// decode) is INVALID_ARGUMENT, the client's mistake, not tonic's INTERNAL.
pub fn undecodable_is_invalid_argument<B>(mut response: http::Response<B>) -> http::Response<B> {
    let internal = http::HeaderValue::from_static("13");
    let undecodable = response.headers().get("grpc-status") == Some(&internal)
        && response
            .headers()
            .get("grpc-message")
            .and_then(|m| m.to_str().ok())
            .is_some_and(|m| {
                m.replace("%20", " ")
                    .starts_with("failed to decode Protobuf message")
            });
    if undecodable {
        response
            .headers_mut()
            .insert("grpc-status", http::HeaderValue::from_static("3"));
    }
    response
}

/// The connections a gRPC server accepts on `listener`, with Nagle's
/// algorithm off: small frames (a move, an event on a stream) go out at
/// once instead of waiting up to 40 ms for the peer's delayed ACK.
pub fn incoming(
    listener: tokio::net::TcpListener,
) -> impl tokio_stream::Stream<Item = std::io::Result<tokio::net::TcpStream>> {
    use tokio_stream::StreamExt as _;
    tokio_stream::wrappers::TcpListenerStream::new(listener).map(|accepted| {
        if let Ok(stream) = &accepted {
            let _ = stream.set_nodelay(true);
        }
        accepted
    })
}

/// How long a client waits for a connection to another service before the
/// call fails as UNAVAILABLE.
pub const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// A channel to another service that passes the caller's trace on, and
/// calls it in this process when it serves here ([`crate::in_process`]).
pub type TracedChannel =
    tonic::service::interceptor::InterceptedService<crate::in_process::Transport, PropagateTrace>;

/// A channel to the service at `url`, connected on first use (so services
/// may start in any order), with the connect timeout, Nagle off, trace
/// propagation and the service key (if any) every client of ours uses; a
/// server this process serves at `url` is called without a socket.
/// `service` names it in errors.
///
/// # Errors
/// When `url` is not a valid URI.
pub fn client(url: &str, service: &str, key: Option<&ServiceKey>) -> anyhow::Result<TracedChannel> {
    let channel = tonic::transport::Endpoint::from_shared(url.to_owned())
        .map_err(|e| anyhow::anyhow!("the {service} URL {url:?} is not valid: {e}"))?
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_nodelay(true)
        .connect_lazy();
    Ok(tonic::service::interceptor::InterceptedService::new(
        crate::in_process::Transport::new(url, channel),
        PropagateTrace {
            key: key.and_then(ServiceKey::header),
        },
    ))
}

/// A service's gRPC server, started the same way everywhere: the listener
/// is bound first (so the address is known before it runs), then every
/// added service is reported SERVING to gRPC health checking, reflection is
/// served beside them, each call is spanned, counted and timed
/// ([`crate::observed`]), oversized requests are INVALID_ARGUMENT, a
/// broken connection to a service behind is UNAVAILABLE
/// ([`answered_codes`]), and the server stops on the shutdown signal.
#[derive(Debug)]
pub struct GrpcServer {
    name: &'static str,
    listener: tokio::net::TcpListener,
    routes: tonic::service::RoutesBuilder,
    serving: Vec<&'static str>,
    /// Calls to the services added after it is set must carry it (health
    /// checks and reflection never need it).
    key: Option<ServiceKey>,
    /// Set for a server browsers reach: gRPC-web over HTTP/1.1, with CORS
    /// for these origins.
    browsers: Option<Browsers>,
}

/// What a server that browsers reach accepts: gRPC-web (binary and text)
/// over HTTP/1.1 and HTTP/2 beside native gRPC, cross-origin calls from
/// `origins` (a page served from the server's own address needs none), and
/// the web pages `pages` answers.
#[derive(Clone, Default)]
pub struct Browsers {
    /// Origins (`https://play.example`) whose pages may call; `*` for any.
    pub origins: Vec<String>,
    /// Answers every GET and HEAD (gRPC calls are POSTs): the web client.
    pub pages: Option<Pages>,
}

/// The answer to a GET or HEAD request, whole: a server's web pages.
pub type Pages = std::sync::Arc<
    dyn Fn(&http::request::Parts) -> http::Response<bytes::Bytes> + Send + Sync + 'static,
>;

impl std::fmt::Debug for Browsers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browsers")
            .field("origins", &self.origins)
            .field("pages", &self.pages.is_some())
            .finish()
    }
}

/// Answers GET and HEAD requests with [`Pages`] and passes every other
/// request (gRPC, gRPC-web, CORS preflights) to the service behind.
#[derive(Clone)]
struct PagesLayer(Pages);

impl<S> tower::Layer<S> for PagesLayer {
    type Service = ServePages<S>;
    fn layer(&self, inner: S) -> ServePages<S> {
        ServePages {
            inner,
            pages: self.0.clone(),
        }
    }
}

#[derive(Clone)]
struct ServePages<S> {
    inner: S,
    pages: Pages,
}

impl<S, B> tower::Service<http::Request<B>> for ServePages<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<tonic::body::Body>>,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = S::Error;
    type Future = futures_util::future::Either<
        std::future::Ready<Result<Self::Response, S::Error>>,
        S::Future,
    >;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let method = request.method();
        if method != http::Method::GET && method != http::Method::HEAD {
            return futures_util::future::Either::Right(self.inner.call(request));
        }
        let (parts, _) = request.into_parts();
        let head = parts.method == http::Method::HEAD;
        let response = (self.pages)(&parts).map(|body| {
            if head {
                tonic::body::Body::empty()
            } else {
                tonic::body::Body::new(http_body_util::Full::new(body))
            }
        });
        futures_util::future::Either::Left(std::future::ready(Ok(response)))
    }
}

impl Browsers {
    /// The CORS layer for these origins: the methods and headers a gRPC-web
    /// client sends, and the answer headers it must read (`grpc-status`,
    /// `grpc-message`, the retry hint), cached by the browser for a day.
    fn cors(&self) -> tower_http::cors::CorsLayer {
        use tower_http::cors::{AllowOrigin, CorsLayer};
        let origin = if self.origins.iter().any(|o| o == "*") {
            AllowOrigin::any()
        } else {
            AllowOrigin::list(
                self.origins
                    .iter()
                    .filter_map(|o| http::HeaderValue::from_str(o.trim_end_matches('/')).ok()),
            )
        };
        let header = http::HeaderName::from_static;
        CorsLayer::new()
            .allow_origin(origin)
            .allow_methods([http::Method::POST, http::Method::OPTIONS])
            .allow_headers([
                header("content-type"),
                header("authorization"),
                header("x-grpc-web"),
                header("x-user-agent"),
                header("grpc-timeout"),
                header("traceparent"),
            ])
            .expose_headers([
                header("grpc-status"),
                header("grpc-message"),
                header("grpc-status-details-bin"),
                header(crate::refusal::RETRY_AFTER_HEADER),
            ])
            .max_age(std::time::Duration::from_secs(24 * 3600))
    }
}

impl GrpcServer {
    /// Binds `addr` (port 0 picks one) for the service called `name`.
    ///
    /// # Errors
    /// When the address cannot be bound.
    pub async fn bind(name: &'static str, addr: std::net::SocketAddr) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| anyhow::anyhow!("binding the {name} to {addr}: {e}"))?;
        Ok(GrpcServer {
            name,
            listener,
            routes: tonic::service::RoutesBuilder::default(),
            serving: Vec::new(),
            key: None,
            browsers: None,
        })
    }

    /// Lets browsers call this server's services: gRPC-web over HTTP/1.1
    /// and HTTP/2, with CORS as `browsers` says.
    #[must_use]
    pub fn for_browsers(mut self, browsers: Browsers) -> Self {
        self.browsers = Some(browsers);
        self
    }

    /// Refuses calls without `key` (when given) to the services added
    /// after this: an internal service's.
    #[must_use]
    pub fn requiring(mut self, key: Option<ServiceKey>) -> Self {
        self.key = key;
        self
    }

    /// The bound address.
    ///
    /// # Errors
    /// When the socket cannot say (it always can once bound).
    pub fn local_addr(&self) -> std::io::Result<std::net::SocketAddr> {
        self.listener.local_addr()
    }

    /// Adds a gRPC service, reported SERVING once the server runs.
    #[must_use]
    pub fn add_service<S>(mut self, service: S) -> Self
    where
        S: tower::Service<
                http::Request<tonic::body::Body>,
                Response = http::Response<tonic::body::Body>,
                Error = std::convert::Infallible,
            > + tonic::server::NamedService
            + Clone
            + Send
            + Sync
            + 'static,
        S::Future: Send + 'static,
    {
        self.serving.push(S::NAME);
        match &self.key {
            Some(key) => {
                self.routes
                    .add_service(tonic::service::interceptor::InterceptedService::new(
                        service,
                        RequireServiceKey(key.clone()),
                    ));
            }
            None => {
                self.routes.add_service(service);
            }
        }
        self
    }

    /// Serves until `shutdown` is triggered.
    ///
    /// # Errors
    /// When reflection cannot be built or the server fails.
    pub async fn serve(self, mut shutdown: crate::shutdown::Shutdown) -> anyhow::Result<()> {
        let (health, health_service) = tonic_health::server::health_reporter();
        for name in &self.serving {
            health
                .set_service_status(*name, tonic_health::ServingStatus::Serving)
                .await;
        }
        // Reflection lists only what this server serves (the gateway's
        // port does not advertise the internal services), and health,
        // over v1 and the v1alpha that older clients speak; every file a
        // listed service needs is served with it, so each resolves.
        let reflection = || {
            self.serving.iter().fold(
                tonic_reflection::server::Builder::configure()
                    .include_reflection_service(false)
                    .register_encoded_file_descriptor_set(ttakji_proto::FILE_DESCRIPTOR_SET)
                    .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
                    .register_encoded_file_descriptor_set(
                        tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET,
                    )
                    .register_encoded_file_descriptor_set(
                        tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET,
                    )
                    .with_service_name("grpc.health.v1.Health")
                    .with_service_name("grpc.reflection.v1.ServerReflection")
                    .with_service_name("grpc.reflection.v1alpha.ServerReflection"),
                |builder, name| builder.with_service_name(*name),
            )
        };
        let v1 = reflection()
            .build_v1()
            .map_err(|e| anyhow::anyhow!("building gRPC reflection: {e}"))?;
        let v1alpha = reflection()
            .build_v1alpha()
            .map_err(|e| anyhow::anyhow!("building gRPC reflection: {e}"))?;
        let mut routes = self.routes;
        routes
            .add_service(health_service)
            .add_service(v1)
            .add_service(v1alpha);
        let routes = routes.routes();
        // What every call passes, from the network or from this process.
        let every_call = tower::ServiceBuilder::new()
            .layer(crate::observed::ObservedLayer)
            .layer(tower::util::MapResponseLayer::new(
                answered_codes::<tonic::body::Body>,
            ));
        // Callers in this process, when it serves here, reach the same
        // service through the same layers but the web ones.
        let _here = self.listener.local_addr().ok().and_then(|addr| {
            crate::in_process::serving(
                addr,
                crate::in_process::LocalService::new(every_call.clone().service(routes.clone())),
            )
        });
        let browsers = self.browsers.as_ref();
        tonic::transport::Server::builder()
            .accept_http1(browsers.is_some())
            .layer(
                tower::ServiceBuilder::new()
                    .option_layer(browsers.and_then(|b| b.pages.clone()).map(PagesLayer))
                    .option_layer(browsers.map(Browsers::cors))
                    .option_layer(browsers.map(|_| tonic_web::GrpcWebLayer::new()))
                    .layer(every_call),
            )
            .add_routes(routes)
            .serve_with_incoming_shutdown(incoming(self.listener), async move {
                shutdown.wait().await;
            })
            .await
            .map_err(|e| anyhow::anyhow!("the {}'s gRPC server: {e}", self.name))
    }
}

#[cfg(test)]
mod tests {
    fn answered(status: &'static str) -> Option<String> {
        let mut response = http::Response::new(());
        response
            .headers_mut()
            .insert("grpc-status", http::HeaderValue::from_static(status));
        super::answered_codes(response)
            .headers()
            .get("grpc-status")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }

    #[test]
    fn a_broken_connection_behind_is_worth_a_retry() {
        for (code, what) in [("2", "UNKNOWN"), ("1", "CANCELLED"), ("8", "a reset")] {
            assert_eq!(
                answered(code).as_deref(),
                Some("14"),
                "{what} → UNAVAILABLE"
            );
        }
        let mut reset = http::Response::new(());
        reset
            .headers_mut()
            .insert("grpc-status", http::HeaderValue::from_static("13"));
        reset.headers_mut().insert(
            "grpc-message",
            http::HeaderValue::from_static("h2%20protocol%20error: stream reset"),
        );
        let reset = super::answered_codes(reset);
        assert_eq!(reset.headers()["grpc-status"], "14");
        assert!(
            reset
                .headers()
                .contains_key(crate::refusal::RETRY_AFTER_HEADER),
            "with a retry hint"
        );
    }

    /// A rate limit (RESOURCE_EXHAUSTED with its hint) stays what it is, and
    /// so does the server's own INTERNAL.
    #[test]
    fn a_rate_limit_and_an_internal_error_stay_as_they_are() {
        let limited = crate::refusal::resource_exhausted(
            "RATE_LIMITED",
            "slow down",
            std::time::Duration::from_secs(1),
        );
        let mut response = http::Response::new(());
        limited.add_header(response.headers_mut()).expect("headers");
        response
            .headers_mut()
            .extend(limited.metadata().clone().into_headers());
        let response = super::answered_codes(response);
        assert_eq!(response.headers()["grpc-status"], "8");
        assert_eq!(answered("13").as_deref(), Some("13"));
    }

    #[test]
    fn an_oversized_request_is_a_malformed_one() {
        assert_eq!(
            answered("11").as_deref(),
            Some("3"),
            "OUT_OF_RANGE → INVALID_ARGUMENT"
        );
    }

    #[test]
    fn every_other_answer_is_left_as_it_is() {
        for code in ["0", "3", "5", "9", "14", "16"] {
            assert_eq!(answered(code).as_deref(), Some(code));
        }
        let bare = super::answered_codes(http::Response::new(()));
        assert!(bare.headers().get("grpc-status").is_none());
    }

    #[test]
    fn a_refusal_without_a_reason_leaves_with_its_codes_and_one_with_its_own() {
        let reason_of = |response: &http::Response<()>| {
            tonic::Status::from_header_map(response.headers())
                .and_then(|s| crate::refusal::reason(&s))
        };
        let mut response = http::Response::new(());
        response
            .headers_mut()
            .insert("grpc-status", http::HeaderValue::from_static("11"));
        let answered = super::answered_codes(response);
        assert_eq!(reason_of(&answered).as_deref(), Some("INVALID_ARGUMENT"));

        let own = crate::refusal::refused(tonic::Code::NotFound, "GAME_NOT_FOUND", "no game");
        let mut response = http::Response::new(());
        own.add_header(response.headers_mut())
            .expect("a status as headers");
        let answered = super::answered_codes(response);
        assert_eq!(reason_of(&answered).as_deref(), Some("GAME_NOT_FOUND"));

        let mut ok = http::Response::new(());
        ok.headers_mut()
            .insert("grpc-status", http::HeaderValue::from_static("0"));
        assert!(
            !super::answered_codes(ok)
                .headers()
                .contains_key("grpc-status-details-bin")
        );
    }

    /// A client made by `client` calls a server marked as serving in this
    /// process without a socket: here nothing listens at its address.
    #[tokio::test]
    async fn a_client_calls_a_server_serving_in_this_process_without_a_socket() {
        let nowhere = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port");
        let (health, service) = tonic_health::server::health_reporter();
        health
            .set_service_status("ttakji.test", tonic_health::ServingStatus::Serving)
            .await;
        crate::in_process::serve_here(nowhere);
        let here =
            crate::in_process::serving(nowhere, crate::in_process::LocalService::new(service))
                .expect("marked");
        let channel = super::client(&format!("http://{nowhere}"), "test", None).expect("a URL");
        let mut client = tonic_health::pb::health_client::HealthClient::new(channel);
        let check = || tonic_health::pb::HealthCheckRequest {
            service: "ttakji.test".to_owned(),
        };
        let answer = client.check(check()).await.expect("answered in process");
        assert_eq!(answer.into_inner().status, 1, "SERVING");
        // Once it stops serving here the call goes to the network, where
        // nothing listens.
        drop(here);
        let refused = client.check(check()).await.expect_err("nothing listens");
        assert_eq!(refused.code(), tonic::Code::Unavailable);
    }

    /// A server whose address is marked serves in this process while it
    /// runs, and stops when it stops.
    #[tokio::test]
    async fn a_marked_server_serves_in_this_process_until_it_stops() {
        let server = super::GrpcServer::bind("test", "127.0.0.1:0".parse().expect("address"))
            .await
            .expect("bound");
        let addr = server.local_addr().expect("address");
        crate::in_process::serve_here(addr);
        let (trigger, shutdown) = crate::shutdown::channel();
        let serving = tokio::spawn(server.serve(shutdown));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while crate::in_process::serving_at(addr).is_none() {
            assert!(std::time::Instant::now() < deadline, "never served here");
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let channel = super::client(&format!("http://{addr}"), "test", None).expect("a URL");
        tonic_health::pb::health_client::HealthClient::new(channel)
            .check(tonic_health::pb::HealthCheckRequest::default())
            .await
            .expect("the server's own health");
        trigger.trigger();
        serving.await.expect("joined").expect("stopped cleanly");
        assert!(crate::in_process::serving_at(addr).is_none());
    }
}
