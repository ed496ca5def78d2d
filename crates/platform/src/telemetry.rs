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
            .fmt_fields(tracing_subscriber::fmt::format::JsonFields::new())
            .event_format(JsonLines)
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
    // A span is entered on every poll of the future it wraps, a dozen
    // times a move. Nothing here reads OpenTelemetry's current context
    // (trace context travels from the span itself), so entering does not
    // activate it, nor time the span's busy and idle spells, nor name the
    // thread: each cost a share of a move's CPU.
    let otel = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_context_activation(false)
        .with_tracked_inactivity(false)
        .with_threads(false)
        .with_filter(filter());
    let _ = tracing_subscriber::registry()
        .with(fmt)
        .with(otel)
        .try_init();
    Ok(TelemetryGuard { provider })
}

/// One JSON object per log line, in the shape log collectors read and
/// OpenTelemetry's log data model names: `timestamp`, `level`, `target`,
/// `message`, the event's fields as JSON values (numbers stay numbers),
/// `span` (the current span's name and fields) and, inside a trace,
/// `trace_id` and `span_id` as hex, so a line joins its trace.
#[derive(Debug, Clone, Copy)]
struct JsonLines;

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for JsonLines
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        use opentelemetry::trace::TraceContextExt as _;
        use serde_json::{Map, Value};
        use tracing_subscriber::fmt::time::FormatTime as _;

        let mut line = Map::new();
        let mut timestamp = String::new();
        tracing_subscriber::fmt::time::SystemTime.format_time(
            &mut tracing_subscriber::fmt::format::Writer::new(&mut timestamp),
        )?;
        line.insert("timestamp".into(), Value::String(timestamp));
        let meta = event.metadata();
        line.insert("level".into(), Value::String(meta.level().to_string()));
        line.insert("target".into(), Value::String(meta.target().to_owned()));
        let mut fields = JsonValues(Map::new());
        event.record(&mut fields);
        let mut fields = fields.0;
        if let Some(message) = fields.remove("message") {
            line.insert("message".into(), message);
        }
        if !fields.is_empty() {
            line.insert("fields".into(), Value::Object(fields));
        }
        if let Some(span) = ctx.lookup_current() {
            let mut described = Map::new();
            described.insert("name".into(), Value::String(span.name().to_owned()));
            let extensions = span.extensions();
            if let Some(recorded) = extensions.get::<tracing_subscriber::fmt::FormattedFields<N>>()
                && let Ok(Value::Object(recorded)) =
                    serde_json::from_str::<Value>(recorded.fields.as_str())
            {
                described.extend(recorded);
            }
            drop(extensions);
            line.insert("span".into(), Value::Object(described));
            let cx = tracing::Span::current().context();
            let span = cx.span();
            let context = span.span_context();
            if context.is_valid() {
                line.insert(
                    "trace_id".into(),
                    Value::String(context.trace_id().to_string()),
                );
                line.insert(
                    "span_id".into(),
                    Value::String(context.span_id().to_string()),
                );
            }
        }
        let text = serde_json::to_string(&Value::Object(line)).map_err(|_| std::fmt::Error)?;
        writeln!(writer, "{text}")
    }
}

/// An event's fields as JSON values: strings, numbers and booleans as
/// themselves, anything else by its `Debug` form.
struct JsonValues(serde_json::Map<String, serde_json::Value>);

impl tracing::field::Visit for JsonValues {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_i64(&mut self, field: &tracing::field::Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_f64(&mut self, field: &tracing::field::Field, value: f64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_bool(&mut self, field: &tracing::field::Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_error(
        &mut self,
        field: &tracing::field::Field,
        value: &(dyn std::error::Error + 'static),
    ) {
        self.0.insert(field.name().into(), value.to_string().into());
    }
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().into(), format!("{value:?}").into());
    }
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
