//! Logs (on standard error) and traces: pretty logs for a person at a terminal, JSON when asked,
//! spans exported over OTLP when an endpoint is configured, and W3C trace
//! context carried across gRPC calls and bus messages.
//!
//! The OpenTelemetry layer is installed even without an exporter, so every
//! span has a trace id that travels with the requests it causes.

use std::collections::HashMap;
use std::io::IsTerminal as _;

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator as _};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Pretty when standard error is a terminal, compact text otherwise.
    #[default]
    Auto,
    /// Multi-line, coloured, for a person.
    Pretty,
    /// One JSON object per line, for a log collector.
    Json,
}

/// Telemetry settings of a process.
#[derive(Debug, Clone, Default)]
pub struct TelemetryConfig {
    /// The `service.name` of exported spans.
    pub service_name: String,
    pub log_format: LogFormat,
    /// An OTLP/gRPC collector (`http://localhost:4317`); none exports nothing.
    pub otlp_endpoint: Option<String>,
}

/// Keeps the tracer provider alive; flushes spans when dropped.
#[derive(Debug)]
pub struct TelemetryGuard {
    provider: SdkTracerProvider,
}

impl TelemetryGuard {
    /// Hands every finished span to the exporters now.
    pub fn flush(&self) {
        let _ = self.provider.force_flush();
    }
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        let _ = self.provider.force_flush();
        let _ = self.provider.shutdown();
    }
}

/// Installs the global subscriber. Filtering follows `RUST_LOG` (default
/// `info`). Call once per process; a second call keeps the first subscriber.
///
/// # Errors
/// When the OTLP exporter cannot be built from the endpoint.
pub fn init(config: &TelemetryConfig) -> anyhow::Result<TelemetryGuard> {
    install(config, provider_builder(config)?)
}

/// Like [`init`], with spans also handed to `exporter` as each one ends
/// (tests read them back from an in-memory exporter).
///
/// # Errors
/// As [`init`].
pub fn init_with_exporter<E>(
    config: &TelemetryConfig,
    exporter: E,
) -> anyhow::Result<TelemetryGuard>
where
    E: opentelemetry_sdk::trace::SpanExporter + 'static,
{
    install(
        config,
        provider_builder(config)?.with_simple_exporter(exporter),
    )
}

fn provider_builder(
    config: &TelemetryConfig,
) -> anyhow::Result<opentelemetry_sdk::trace::TracerProviderBuilder> {
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let mut builder = SdkTracerProvider::builder().with_resource(
        opentelemetry_sdk::Resource::builder()
            .with_service_name(config.service_name.clone())
            .build(),
    );
    if let Some(endpoint) = &config.otlp_endpoint {
        use opentelemetry_otlp::WithExportConfig as _;
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(endpoint)
            .build()
            .map_err(|e| anyhow::anyhow!("OTLP exporter for {endpoint}: {e}"))?;
        builder = builder.with_batch_exporter(exporter);
    }
    Ok(builder)
}

fn install(
    config: &TelemetryConfig,
    builder: opentelemetry_sdk::trace::TracerProviderBuilder,
) -> anyhow::Result<TelemetryGuard> {
    let provider = builder.build();
    let tracer = provider.tracer("ttakji");
    let filter = || EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let fmt = match config.log_format {
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .with_current_span(true)
            .with_writer(std::io::stderr)
            .with_filter(filter())
            .boxed(),
        LogFormat::Pretty => tracing_subscriber::fmt::layer()
            .pretty()
            .with_writer(std::io::stderr)
            .with_filter(filter())
            .boxed(),
        LogFormat::Auto if std::io::stderr().is_terminal() => tracing_subscriber::fmt::layer()
            .pretty()
            .with_writer(std::io::stderr)
            .with_filter(filter())
            .boxed(),
        LogFormat::Auto => tracing_subscriber::fmt::layer()
            .compact()
            .with_ansi(false)
            .with_writer(std::io::stderr)
            .with_filter(filter())
            .boxed(),
    };
    let otel = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_filter(filter());
    let _ = tracing_subscriber::registry()
        .with(fmt)
        .with(otel)
        .try_init();
    Ok(TelemetryGuard { provider })
}

/// The current span's trace context as W3C headers (`traceparent`, …).
#[must_use]
pub fn current_context_headers() -> HashMap<String, String> {
    let mut headers = HashMap::new();
    let cx = tracing::Span::current().context();
    TraceContextPropagator::new().inject_context(&cx, &mut headers);
    headers
}

/// Makes `span` a child of the trace context in `headers`, if there is one.
pub fn set_parent_from(span: &tracing::Span, headers: &impl Extractor) {
    let cx = TraceContextPropagator::new().extract(headers);
    let _ = span.set_parent(cx);
}

/// Writes the current trace context into gRPC request metadata.
pub fn inject_into_metadata(metadata: &mut tonic::metadata::MetadataMap) {
    let cx = tracing::Span::current().context();
    TraceContextPropagator::new().inject_context(&cx, &mut MetadataInjector(metadata));
}

struct MetadataInjector<'a>(&'a mut tonic::metadata::MetadataMap);

impl Injector for MetadataInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(k), Ok(v)) = (
            tonic::metadata::MetadataKey::from_bytes(key.as_bytes()),
            tonic::metadata::MetadataValue::try_from(value.as_str()),
        ) {
            self.0.insert(k, v);
        }
    }
}

/// Reads trace context from HTTP headers (a gRPC request's metadata).
#[derive(Debug)]
pub struct HeaderExtractor<'a>(pub &'a http::HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}
