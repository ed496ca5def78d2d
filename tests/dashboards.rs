//! The dashboards and the monitoring config in `deploy/` against the code:
//! every metric a dashboard queries is one a service exports, every panel
//! queries the provisioned Prometheus, and the compose file's Prometheus
//! scrapes every service it runs, on the port the service serves metrics on.
//!
//! The exported names are read from the literals of the `metrics` macros
//! (`counter!("name"`, `gauge!("name"`, `histogram!("name"`) in the
//! services' and crates' sources; the queried names from each panel's
//! PromQL. The YAML files are read line by line in the form they are
//! written in, which is enough for the few keys checked here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clap::Args as _;
use serde_json::Value;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

// ---------------------------------------------------------------------------
// What the services export

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// Every metric name the code records, with its kind.
#[derive(Debug, Default)]
struct Exported(BTreeMap<String, Kind>);

impl Exported {
    /// From the macro literals in every `.rs` file under `services/`,
    /// `crates/` and `src/` (tests and benchmarks left out: what they
    /// record is not exported).
    fn from_sources() -> Exported {
        let mut files = Vec::new();
        for dir in ["services", "crates", "src"] {
            rust_files(&repo().join(dir), &mut files);
        }
        let mut exported = Exported::default();
        for file in &files {
            for (name, kind) in macro_names(&read(file)) {
                exported.0.insert(name, kind);
            }
        }
        exported
    }

    /// Whether `series` is what Prometheus shows of an exported metric: its
    /// name, or for a histogram its `_bucket`, `_sum` and `_count` series.
    fn has(&self, series: &str) -> bool {
        if self.0.contains_key(series) {
            return true;
        }
        ["_bucket", "_sum", "_count"].iter().any(|suffix| {
            series
                .strip_suffix(suffix)
                .is_some_and(|base| self.0.get(base) == Some(&Kind::Histogram))
        })
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("listing {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if !matches!(name, "tests" | "benches" | "target" | "test-support") {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// The names recorded in `source`: the string literal that opens each
/// `counter!(`, `gauge!(` or `histogram!(` (a name given any other way is
/// not seen, and a dashboard querying it fails the check below).
fn macro_names(source: &str) -> Vec<(String, Kind)> {
    let mut names = Vec::new();
    for (word, kind) in [
        ("counter!", Kind::Counter),
        ("gauge!", Kind::Gauge),
        ("histogram!", Kind::Histogram),
    ] {
        for (at, _) in source.match_indices(word) {
            let whole_word = source[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            let rest = source[at + word.len()..].trim_start();
            let Some(rest) = rest.strip_prefix('(') else {
                continue;
            };
            let Some(rest) = rest.trim_start().strip_prefix('"') else {
                continue;
            };
            if let (true, Some(end)) = (whole_word, rest.find('"')) {
                names.push((rest[..end].to_owned(), kind));
            }
        }
    }
    names
}

/// Series Prometheus makes itself for every target it scrapes.
const PROMETHEUS_OWN: &[&str] = &[
    "up",
    "scrape_duration_seconds",
    "scrape_samples_scraped",
    "scrape_samples_post_metric_relabeling",
    "scrape_series_added",
];

/// The authority's shard-lease metrics, which arrive with the work that
/// lets several authorities share games and which the dashboards already
/// show. They are excused only while the code records none of them: once
/// the first is there, every one must be, so a name that changed on the
/// way fails here.
const ANNOUNCED: &[(&str, Kind)] = &[
    ("ttakji_shards_owned", Kind::Gauge),
    ("ttakji_lease_renewals_total", Kind::Counter),
    ("ttakji_takeover_seconds", Kind::Histogram),
];

/// The exported metrics, with [`ANNOUNCED`] while none of it is in the code.
fn exported() -> Exported {
    let mut exported = Exported::from_sources();
    if ANNOUNCED
        .iter()
        .all(|(name, _)| !exported.0.contains_key(*name))
    {
        for (name, kind) in ANNOUNCED {
            exported.0.insert((*name).to_owned(), *kind);
        }
    }
    exported
}

// ---------------------------------------------------------------------------
// What a PromQL expression names

/// PromQL's functions and aggregations: an identifier before `(`.
const FUNCTIONS: &[&str] = &[
    "abs",
    "absent",
    "absent_over_time",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "avg",
    "avg_over_time",
    "bottomk",
    "ceil",
    "changes",
    "clamp",
    "clamp_max",
    "clamp_min",
    "cos",
    "cosh",
    "count",
    "count_over_time",
    "count_values",
    "day_of_month",
    "day_of_week",
    "day_of_year",
    "days_in_month",
    "deg",
    "delta",
    "deriv",
    "double_exponential_smoothing",
    "end",
    "exp",
    "floor",
    "group",
    "histogram_avg",
    "histogram_count",
    "histogram_fraction",
    "histogram_quantile",
    "histogram_stddev",
    "histogram_stdvar",
    "histogram_sum",
    "holt_winters",
    "hour",
    "idelta",
    "increase",
    "irate",
    "label_join",
    "label_replace",
    "last_over_time",
    "limit_ratio",
    "limitk",
    "ln",
    "log10",
    "log2",
    "mad_over_time",
    "max",
    "max_over_time",
    "min",
    "min_over_time",
    "minute",
    "month",
    "pi",
    "predict_linear",
    "present_over_time",
    "quantile",
    "quantile_over_time",
    "rad",
    "rate",
    "resets",
    "round",
    "scalar",
    "sgn",
    "sin",
    "sinh",
    "sort",
    "sort_by_label",
    "sort_by_label_desc",
    "sort_desc",
    "sqrt",
    "start",
    "stddev",
    "stddev_over_time",
    "stdvar",
    "stdvar_over_time",
    "sum",
    "sum_over_time",
    "tan",
    "tanh",
    "time",
    "timestamp",
    "topk",
    "vector",
    "year",
];

/// Keywords whose parenthesised list holds label names, not series.
const GROUPING: &[&str] = &[
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
];

/// Keywords that are neither series nor functions.
const KEYWORDS: &[&str] = &[
    "offset", "bool", "and", "or", "unless", "atan2", "inf", "nan",
];

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Name(String),
    Open,
    Close,
    /// Anything else: an operator, a number or duration, a string, a label
    /// matcher `{…}`, a range `[…]`, a Grafana variable.
    Other,
}

/// Skips from `chars[i]` (an opening `open`) past its closing `close`,
/// stepping over quoted strings; returns the index after it.
fn skip_past(chars: &[char], mut i: usize, close: char) -> usize {
    i += 1;
    while i < chars.len() && chars[i] != close {
        if matches!(chars[i], '"' | '\'' | '`') {
            i = skip_string(chars, i);
        } else {
            i += 1;
        }
    }
    i + 1
}

/// Skips the string opening at `chars[i]`; returns the index after it.
fn skip_string(chars: &[char], mut i: usize) -> usize {
    let quote = chars[i];
    i += 1;
    while i < chars.len() && chars[i] != quote {
        i += if chars[i] == '\\' { 2 } else { 1 };
    }
    i + 1
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == ':'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

fn tokens(expr: &str) -> Vec<Token> {
    let chars: Vec<char> = expr.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let (token, next) = match c {
            '(' => (Token::Open, i + 1),
            ')' => (Token::Close, i + 1),
            '{' => (Token::Other, skip_past(&chars, i, '}')),
            '[' => (Token::Other, skip_past(&chars, i, ']')),
            '"' | '\'' | '`' => (Token::Other, skip_string(&chars, i)),
            '$' if chars.get(i + 1) == Some(&'{') => (Token::Other, skip_past(&chars, i + 1, '}')),
            '$' => {
                let end = (i + 1..chars.len())
                    .find(|&j| !is_name_char(chars[j]))
                    .unwrap_or(chars.len());
                (Token::Other, end)
            }
            c if c.is_ascii_digit() || c == '.' => {
                let end = (i..chars.len())
                    .find(|&j| !(is_name_char(chars[j]) || chars[j] == '.'))
                    .unwrap_or(chars.len());
                (Token::Other, end)
            }
            c if is_name_start(c) => {
                let end = (i..chars.len())
                    .find(|&j| !is_name_char(chars[j]))
                    .unwrap_or(chars.len());
                (Token::Name(chars[i..end].iter().collect()), end)
            }
            _ => (Token::Other, i + 1),
        };
        tokens.push(token);
        i = next;
    }
    tokens
}

/// The series and the functions an expression names, in order.
#[derive(Debug, Default, PartialEq, Eq)]
struct Names {
    series: Vec<String>,
    functions: Vec<String>,
}

fn names(expr: &str) -> Names {
    // Grouping clauses go first, so that `sum by (le) (x)` reads as `sum(x)`.
    let mut kept = Vec::new();
    let mut tokens = tokens(expr).into_iter().peekable();
    while let Some(token) = tokens.next() {
        if let Token::Name(name) = &token
            && GROUPING.contains(&name.as_str())
        {
            if tokens.peek() == Some(&Token::Open) {
                for inside in tokens.by_ref() {
                    if inside == Token::Close {
                        break;
                    }
                }
            }
            continue;
        }
        kept.push(token);
    }
    let mut names = Names::default();
    for (i, token) in kept.iter().enumerate() {
        let Token::Name(name) = token else {
            continue;
        };
        if kept.get(i + 1) == Some(&Token::Open) {
            names.functions.push(name.clone());
        } else if !KEYWORDS.contains(&name.as_str()) {
            names.series.push(name.clone());
        }
    }
    names
}

// ---------------------------------------------------------------------------
// The dashboards

const DASHBOARDS: &str = "deploy/grafana/dashboards";

/// Every dashboard file, by name, parsed.
fn dashboards() -> Vec<(String, Value)> {
    let dir = repo().join(DASHBOARDS);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("listing {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no dashboards in {}", dir.display());
    files
        .iter()
        .map(|path| {
            let name = format!(
                "{DASHBOARDS}/{}",
                path.file_name().expect("a file").display()
            );
            let json = serde_json::from_str(&read(path))
                .unwrap_or_else(|e| panic!("{name} is not valid JSON: {e}"));
            (name, json)
        })
        .collect()
}

/// Every panel of a dashboard, those inside rows too, rows left out.
fn panels(dashboard: &Value) -> Vec<&Value> {
    fn walk<'a>(panels: &'a Value, out: &mut Vec<&'a Value>) {
        for panel in panels.as_array().into_iter().flatten() {
            if panel["type"] != "row" {
                out.push(panel);
            }
            walk(&panel["panels"], out);
        }
    }
    let mut out = Vec::new();
    walk(&dashboard["panels"], &mut out);
    out
}

fn title(panel: &Value) -> &str {
    panel["title"].as_str().unwrap_or("(untitled)")
}

/// Each unknown name a dashboard's queries use, as "dashboard, panel: why".
fn unknown_names(file: &str, dashboard: &Value, exported: &Exported) -> Vec<String> {
    let mut unknown = Vec::new();
    for panel in panels(dashboard) {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = target["expr"].as_str().unwrap_or("");
            let Names { series, functions } = names(expr);
            for name in series {
                if !exported.has(&name) && !PROMETHEUS_OWN.contains(&name.as_str()) {
                    unknown.push(format!(
                        "{file}, panel {:?}: no service exports {name} (in {expr})",
                        title(panel)
                    ));
                }
            }
            for name in functions {
                if !FUNCTIONS.contains(&name.as_str()) {
                    unknown.push(format!(
                        "{file}, panel {:?}: PromQL has no function {name} (in {expr})",
                        title(panel)
                    ));
                }
            }
        }
    }
    unknown
}

/// The uids of the datasources Grafana is provisioned with.
fn provisioned_datasources() -> BTreeSet<String> {
    let dir = repo().join("deploy/grafana/provisioning/datasources");
    let mut uids = BTreeSet::new();
    for entry in
        std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("listing {}: {e}", dir.display()))
    {
        let path = entry.expect("a directory entry").path();
        for line in read(&path).lines() {
            if let Some(uid) = line.trim().strip_prefix("uid:") {
                uids.insert(uid.trim().trim_matches('"').to_owned());
            }
        }
    }
    uids
}

#[test]
fn every_dashboard_is_json_with_a_title_panels_and_a_uid_of_its_own() {
    let mut seen = BTreeMap::new();
    for (file, dashboard) in dashboards() {
        let uid = dashboard["uid"]
            .as_str()
            .filter(|uid| !uid.is_empty())
            .unwrap_or_else(|| panic!("{file} has no uid"));
        if let Some(other) = seen.insert(uid.to_owned(), file.clone()) {
            panic!("{file} and {other} both have the uid {uid}");
        }
        assert!(
            dashboard["title"].as_str().is_some_and(|t| !t.is_empty()),
            "{file} has no title"
        );
        assert!(!panels(&dashboard).is_empty(), "{file} has no panels");
    }
}

#[test]
fn every_panel_queries_the_provisioned_prometheus() {
    let datasources = provisioned_datasources();
    for (file, dashboard) in dashboards() {
        for panel in panels(&dashboard) {
            let targets = panel["targets"].as_array().map_or(&[][..], Vec::as_slice);
            assert!(
                !targets.is_empty(),
                "{file}, panel {:?} has no query",
                title(panel)
            );
            for target in targets {
                assert!(
                    target["expr"]
                        .as_str()
                        .is_some_and(|e| !e.trim().is_empty()),
                    "{file}, panel {:?}: a query without an expression",
                    title(panel)
                );
                for source in [&panel["datasource"], &target["datasource"]] {
                    if let Some(uid) = source["uid"].as_str() {
                        assert!(
                            datasources.contains(uid),
                            "{file}, panel {:?}: datasource {uid} is not provisioned ({datasources:?})",
                            title(panel)
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn every_metric_a_dashboard_queries_is_exported_by_a_service() {
    let exported = exported();
    let unknown: Vec<String> = dashboards()
        .iter()
        .flat_map(|(file, dashboard)| unknown_names(file, dashboard, &exported))
        .collect();
    assert!(unknown.is_empty(), "{}", unknown.join("\n"));
}

#[test]
fn a_misspelt_metric_or_function_in_a_panel_is_caught() {
    let exported = exported();
    let dashboard = serde_json::json!({
        "panels": [{"type": "row", "title": "Games", "panels": [{
            "title": "Moves per second",
            "targets": [
                {"expr": "sum(rate(ttakji_moves_acepted_total[$__rate_interval]))"},
                {"expr": "histogram_quantile(0.99, sum by (le) (rate(ttakji_move_handling_seconds_bucket[5m])))"},
                {"expr": "sum(rat(ttakji_moves_accepted_total[5m]))"},
                {"expr": "sum(ttakji_live_games_bucket)"},
            ],
        }]}],
    });
    let unknown = unknown_names("typo.json", &dashboard, &exported);
    assert_eq!(unknown.len(), 3, "{unknown:#?}");
    assert!(
        unknown[0].starts_with(
            "typo.json, panel \"Moves per second\": no service exports ttakji_moves_acepted_total"
        ),
        "{unknown:#?}"
    );
    assert!(
        unknown[1].contains("PromQL has no function rat"),
        "{unknown:#?}"
    );
    assert!(
        unknown[2].contains("no service exports ttakji_live_games_bucket"),
        "a gauge has no buckets: {unknown:#?}"
    );
}

#[test]
fn a_query_names_its_series_past_functions_labels_ranges_and_grouping() {
    let read = names(
        r#"histogram_quantile(0.9, sum by (le, method) (rate(ttakji_call_seconds_bucket{method!="WatchGame", le=~".*"}[$__rate_interval] offset 5m)))
           / on (instance) group_left (job) max without (pool) (ttakji_tickets_waiting) > bool 0
           or sum(up) by (job) * ${scale} + vector(1e3)"#,
    );
    assert_eq!(
        read.series,
        ["ttakji_call_seconds_bucket", "ttakji_tickets_waiting", "up"]
    );
    assert_eq!(
        read.functions,
        ["histogram_quantile", "sum", "rate", "max", "sum", "vector"]
    );
}

#[test]
fn the_metric_macros_are_read_for_their_names_and_kinds() {
    let source = r#"
        metrics::counter!("ttakji_moves_accepted_total").increment(1);
        metrics::histogram!(
            "ttakji_ai_think_seconds", "level" => level
        )
        .record(think);
        gauge!("ttakji_live_games").increment(1.0);
        describe_counter!("not_recorded_here", "a description");
        let counter = counter!(NAME);
    "#;
    assert_eq!(
        macro_names(source),
        [
            ("ttakji_moves_accepted_total".to_owned(), Kind::Counter),
            ("ttakji_live_games".to_owned(), Kind::Gauge),
            ("ttakji_ai_think_seconds".to_owned(), Kind::Histogram),
        ]
    );
}

// ---------------------------------------------------------------------------
// Compose and its Prometheus

/// The services of `deploy/compose.yaml`: each key indented two spaces
/// under `services:`, with the lines of its block.
fn compose_services() -> BTreeMap<String, Vec<String>> {
    let compose = read(&repo().join("deploy/compose.yaml"));
    let mut services = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut inside = false;
    for line in compose.lines() {
        if !line.starts_with(' ') && !line.trim().is_empty() && !line.starts_with('#') {
            inside = line.trim_end() == "services:";
            current = None;
            continue;
        }
        if !inside {
            continue;
        }
        let key = line
            .strip_prefix("  ")
            .filter(|rest| !rest.starts_with([' ', '#']));
        if let Some(name) = key.and_then(|k| k.trim_end().strip_suffix(':')) {
            current = Some(name.to_owned());
            services.insert(name.to_owned(), Vec::new());
        } else if let Some(name) = &current {
            services
                .get_mut(name)
                .expect("the current service")
                .push(line.trim().to_owned());
        }
    }
    services
}

/// The value of `key:` in a service's block.
fn setting<'a>(block: &'a [String], key: &str) -> Option<&'a str> {
    block
        .iter()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix(':'))
        .map(str::trim)
}

/// The ttakji command a service runs (`command: ["authority"]`), if any.
fn command(block: &[String]) -> Option<&str> {
    let value = setting(block, "command")?;
    let first = value.split('"').nth(1)?;
    ["gateway", "authority", "matchmaker", "ratings"]
        .contains(&first)
        .then_some(first)
}

/// The port `ttakji COMMAND` serves `/metrics` on unless told otherwise.
fn default_metrics_port(command: &str) -> u16 {
    let cli = clap::Command::new("ttakji");
    let cli = match command {
        "gateway" => ttakji_gateway::Config::augment_args(cli),
        "authority" => ttakji_authority::Config::augment_args(cli),
        "matchmaker" => ttakji_matchmaker::Config::augment_args(cli),
        "ratings" => ttakji_ratings::Config::augment_args(cli),
        other => panic!("no service {other}"),
    };
    let arg = cli
        .get_arguments()
        .find(|arg| arg.get_id() == "metrics_listen")
        .unwrap_or_else(|| panic!("ttakji {command} has no --metrics-listen"));
    let default = arg
        .get_default_values()
        .first()
        .map(|v| v.to_string_lossy());
    let addr: std::net::SocketAddr = default
        .as_deref()
        .unwrap_or_default()
        .parse()
        .unwrap_or_else(|e| panic!("ttakji {command}'s metrics address {default:?}: {e}"));
    addr.port()
}

/// The ttakji services of the compose file with their commands.
fn ttakji_services() -> Vec<(String, String, Vec<String>)> {
    compose_services()
        .into_iter()
        .filter_map(|(name, block)| Some((name, command(&block)?.to_owned(), block)))
        .collect()
}

#[test]
fn prometheus_in_compose_scrapes_every_service_on_its_metrics_port() {
    let config = read(&repo().join("deploy/prometheus.yml"));
    let targets: BTreeSet<&str> = config
        .lines()
        .filter(|line| line.trim_start().starts_with("- targets:"))
        .flat_map(|line| line.split('"').skip(1).step_by(2))
        .collect();
    let services = ttakji_services();
    let commands: BTreeSet<&str> = services.iter().map(|(_, c, _)| c.as_str()).collect();
    assert_eq!(
        commands,
        BTreeSet::from(["authority", "gateway", "matchmaker", "ratings"]),
        "compose runs every service"
    );
    for (name, command, block) in &services {
        let port = setting(block, "TTAKJI_METRICS_LISTEN")
            .and_then(|addr| addr.rsplit(':').next()?.parse().ok())
            .unwrap_or_else(|| default_metrics_port(command));
        let target = format!("{name}:{port}");
        assert!(
            targets.contains(target.as_str()),
            "deploy/prometheus.yml does not scrape {target} (ttakji {command}); it scrapes {targets:?}"
        );
    }
    let grafana = compose_services()
        .remove("grafana")
        .expect("compose runs Grafana");
    let provider = read(&repo().join("deploy/grafana/provisioning/dashboards/ttakji.yaml"));
    let path = provider
        .lines()
        .find_map(|line| line.trim().strip_prefix("path:"))
        .map(str::trim)
        .expect("the dashboard provider names a path");
    assert!(
        grafana
            .iter()
            .any(|line| line.contains(&format!("./grafana/dashboards:{path}"))),
        "Grafana reads dashboards from {path}, where compose does not put deploy/grafana/dashboards"
    );
}

#[test]
fn in_compose_every_service_exports_traces_and_reaches_every_authority() {
    let services = ttakji_services();
    let authorities: Vec<String> = services
        .iter()
        .filter(|(_, command, _)| command == "authority")
        .map(|(name, _, _)| format!("http://{name}:50052"))
        .collect();
    assert!(authorities.len() >= 2, "compose runs {authorities:?}");
    for (name, command, block) in &services {
        assert!(
            setting(block, "TTAKJI_OTLP_ENDPOINT").is_some_and(|e| !e.is_empty()),
            "{name} exports no traces"
        );
        if command == "authority" {
            assert_eq!(
                setting(block, "TTAKJI_ADVERTISE_URL"),
                Some(format!("http://{name}:50052").as_str()),
                "{name} advertises another address"
            );
        } else {
            let urls: Vec<&str> = setting(block, "TTAKJI_AUTHORITY_URL")
                .unwrap_or_else(|| panic!("{name} names no authority"))
                .split(',')
                .collect();
            assert_eq!(urls, authorities, "{name} reaches {urls:?}");
        }
    }
}

#[test]
fn every_recorded_metric_is_described_in_the_catalog_with_its_kind_and_nothing_else_is() {
    use ttakji_platform::metrics::{CATALOG, Kind as Described};
    let described: BTreeMap<&str, Kind> = CATALOG
        .iter()
        .map(|&(name, kind, help)| {
            assert!(!help.trim().is_empty(), "{name} has no help text");
            let kind = match kind {
                Described::Counter => Kind::Counter,
                Described::Gauge => Kind::Gauge,
                Described::Histogram => Kind::Histogram,
            };
            (name, kind)
        })
        .collect();
    let recorded = Exported::from_sources().0;
    for (name, kind) in &recorded {
        assert_eq!(
            described.get(name.as_str()),
            Some(kind),
            "{name} is recorded as a {kind:?} but the catalog (crates/platform/src/metrics.rs) says otherwise"
        );
        if *kind == Kind::Counter {
            assert!(
                name.ends_with("_total"),
                "the counter {name} must end in _total"
            );
        }
    }
    for name in described.keys() {
        assert!(
            recorded.contains_key(*name),
            "{name} is in the catalog but nothing records it"
        );
    }
}
