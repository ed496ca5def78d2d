//! The services started the way the deployment files start them: every
//! `ttakji` service of `deploy/compose.yaml` and of `deploy/k8s/ttakji.yaml`
//! runs with the command line and environment read from the file (and the
//! image's `ENV` from `deploy/Dockerfile`), becomes healthy, serves metrics
//! that `promtool` accepts, and together they play a move.
//!
//! What cannot be the same on one test machine is mapped, and only that:
//! each host name (`redis`, `postgres`, `authority-1`, a pod's IP…) with its
//! port becomes a free port on loopback where a server of the test's own
//! listens (its own Redis, a fresh Postgres database, an OTLP collector, the
//! service itself), and a Kubernetes secret's keys get the test's values.
//! Kubernetes runs one replica of each Deployment here.

mod support;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command};

use support::operator::{promtool_check, start_collector};
use support::{
    Process, SERVICE_KEY, TOKEN_KEYS, free_port, fresh_postgres, redis_server, scrape, sign_in,
};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;
use ttakji_proto::v1 as pb;
use yaml_rust2::{Yaml, YamlLoader};

fn read(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn yaml(path: &str) -> Vec<Yaml> {
    YamlLoader::load_from_str(&read(path)).unwrap_or_else(|e| panic!("{path} is not YAML: {e}"))
}

fn text(value: &Yaml) -> Option<String> {
    match value {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// One `ttakji` service as a deployment file starts it.
#[derive(Debug, Clone)]
struct Service {
    /// Its name in the file, which is also the host others reach it at.
    name: String,
    args: Vec<String>,
    env: BTreeMap<String, String>,
}

impl Service {
    /// The port its gRPC server listens on: `TTAKJI_LISTEN`'s, or the
    /// service's default.
    fn grpc_port(&self) -> u16 {
        self.env
            .get("TTAKJI_LISTEN")
            .and_then(|a| a.rsplit(':').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| match self.args[0].as_str() {
                "gateway" => 50051,
                "authority" => 50052,
                "matchmaker" => 50053,
                "ratings" => 50054,
                other => panic!("no default port for {other}"),
            })
    }

    fn metrics_port(&self) -> Option<u16> {
        self.env
            .get("TTAKJI_METRICS_LISTEN")
            .and_then(|a| a.rsplit(':').next())
            .and_then(|p| p.parse().ok())
    }
}

/// The `ENV` lines of the image every service runs in.
fn image_env() -> BTreeMap<String, String> {
    read("deploy/Dockerfile")
        .lines()
        .filter_map(|line| line.trim().strip_prefix("ENV "))
        .filter_map(|rest| rest.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().trim_matches('"').to_owned()))
        .collect()
}

/// The services of `deploy/compose.yaml` built from the project's image.
fn compose_services() -> Vec<Service> {
    let docs = yaml("deploy/compose.yaml");
    let services = docs[0]["services"]
        .as_hash()
        .expect("compose.yaml has services");
    let mut found = Vec::new();
    for (name, service) in services {
        let built_here = service["build"]["dockerfile"].as_str() == Some("deploy/Dockerfile")
            || service["image"]
                .as_str()
                .is_some_and(|i| i.starts_with("ttakji"));
        if !built_here {
            continue;
        }
        let mut env = image_env();
        if let Some(vars) = service["environment"].as_hash() {
            for (key, value) in vars {
                env.insert(
                    text(key).expect("a variable's name"),
                    text(value).expect("a variable's value"),
                );
            }
        }
        found.push(Service {
            name: text(name).expect("a service's name"),
            args: service["command"]
                .as_vec()
                .expect("a command")
                .iter()
                .map(|a| text(a).expect("an argument"))
                .collect(),
            env,
        });
    }
    found
}

/// `$(VAR)` in a Kubernetes value, from the variables defined before it.
fn expand(value: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = value.to_owned();
    for (key, known) in env {
        out = out.replace(&format!("$({key})"), known);
    }
    out
}

/// The containers of `deploy/k8s/ttakji.yaml`'s Deployments, their secret
/// keys taken from `secrets` and a pod's IP as loopback.
fn kubernetes_services(secrets: &BTreeMap<&str, String>) -> Vec<Service> {
    let mut found = Vec::new();
    for doc in yaml("deploy/k8s/ttakji.yaml") {
        if doc["kind"].as_str() != Some("Deployment") {
            continue;
        }
        let containers = doc["spec"]["template"]["spec"]["containers"]
            .as_vec()
            .expect("a Deployment's containers");
        for container in containers {
            let mut env = image_env();
            for var in container["env"].as_vec().into_iter().flatten() {
                let key = var["name"].as_str().expect("a variable's name").to_owned();
                let value = if let Some(value) = text(&var["value"]) {
                    expand(&value, &env)
                } else if let Some(secret) = var["valueFrom"]["secretKeyRef"]["key"].as_str() {
                    secrets
                        .get(secret)
                        .unwrap_or_else(|| panic!("the test has no value for the secret {secret}"))
                        .clone()
                } else if var["valueFrom"]["fieldRef"]["fieldPath"].as_str() == Some("status.podIP")
                {
                    "127.0.0.1".to_owned()
                } else {
                    panic!("{key}: a value the test cannot give: {var:?}")
                };
                env.insert(key, value);
            }
            found.push(Service {
                name: doc["metadata"]["name"]
                    .as_str()
                    .expect("a Deployment's name")
                    .to_owned(),
                args: container["args"]
                    .as_vec()
                    .expect("a container's args")
                    .iter()
                    .map(|a| text(a).expect("an argument"))
                    .collect(),
                env,
            });
        }
    }
    found
}

/// Where each `host:port` of a deployment is on this machine.
#[derive(Debug, Default)]
struct Hosts(BTreeMap<(String, u16), SocketAddr>);

impl Hosts {
    fn map(&mut self, host: &str, port: u16, to: SocketAddr) {
        self.0.insert((host.to_owned(), port), to);
    }

    /// `value` with every known `host:port` replaced by its local address.
    fn rewrite(&self, value: &str) -> String {
        let mut out = value.to_owned();
        for ((host, port), to) in &self.0 {
            out = out.replace(&format!("{host}:{port}"), &to.to_string());
        }
        out
    }
}

fn local(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// A running service (stopped when dropped), at the gRPC and metrics
/// addresses the others were told.
struct Running {
    name: String,
    kind: String,
    _process: Process,
    grpc: SocketAddr,
    metrics: Option<SocketAddr>,
}

/// Starts every service of a deployment on this machine with its own
/// Redis, Postgres database and OTLP collector, as the file says; then
/// checks each is healthy and its metrics pass `promtool`, and plays.
async fn deploy(services: Vec<Service>) {
    let redis_port = free_port();
    let _redis = KillOnDrop(redis_server(redis_port, &[]));
    let db = fresh_postgres().await;
    let (collector, _spans) = start_collector().await;

    let mut hosts = Hosts::default();
    hosts.map("redis", 6379, local(redis_port));
    hosts.map("jaeger", 4317, collector);
    hosts.map("otel-collector", 4317, collector);
    let mut own = Vec::new();
    for service in &services {
        let grpc = local(free_port());
        let metrics = service.metrics_port().map(|_| local(free_port()));
        // Others reach it by its name; it reaches itself at its pod's IP.
        hosts.map(&service.name, service.grpc_port(), grpc);
        hosts.map("127.0.0.1", service.grpc_port(), grpc);
        own.push((grpc, metrics));
    }

    let mut running = Vec::new();
    // Authorities first: the others call them.
    let mut order: Vec<usize> = (0..services.len()).collect();
    order.sort_by_key(|&i| services[i].args[0] != "authority");
    for i in order {
        let service = &services[i];
        let (grpc, metrics) = own[i];
        let mut env: BTreeMap<String, String> = service
            .env
            .iter()
            .map(|(k, v)| (k.clone(), hosts.rewrite(v)))
            .collect();
        env.insert("TTAKJI_LISTEN".to_owned(), grpc.to_string());
        if let Some(metrics) = metrics {
            env.insert("TTAKJI_METRICS_LISTEN".to_owned(), metrics.to_string());
        }
        // The file's credentials are placeholders: the test's database.
        if let Some(url) = env.get_mut("TTAKJI_DATABASE_URL") {
            url.clone_from(&db);
        }
        let mut command = Command::new(env!("CARGO_BIN_EXE_ttakji"));
        command
            .args(&service.args)
            .env_clear()
            .envs(&env)
            .stderr(support::child_log());
        running.push(Running {
            name: service.name.clone(),
            kind: service.args[0].clone(),
            _process: Process::start(command),
            grpc,
            metrics,
        });
    }

    for service in &running {
        let mut health =
            HealthClient::new(support::channel(&format!("http://{}", service.grpc)).await);
        let status = health
            .check(HealthCheckRequest {
                service: String::new(),
            })
            .await
            .unwrap_or_else(|e| panic!("{} answers no health check: {e}", service.name))
            .into_inner()
            .status;
        assert_eq!(
            status,
            tonic_health::pb::health_check_response::ServingStatus::Serving as i32,
            "{} is not serving",
            service.name
        );
    }

    let gateway = running
        .iter()
        .find(|s| s.kind == "gateway")
        .expect("a gateway");
    let jin = sign_in(&format!("http://{}", gateway.grpc), "jin").await;
    let game = jin.start(pb::ColorChoice::Black).await;
    jin.play(&game.game_id, 1, "E5")
        .await
        .expect("a legal move");

    for service in &running {
        let metrics = service
            .metrics
            .unwrap_or_else(|| panic!("{} serves no metrics", service.name));
        let answer = scrape(metrics).await;
        let page = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body);
        assert!(
            page.contains("rpc_server_calls_total"),
            "{}'s metrics count no call:\n{page}",
            service.name
        );
        if let Err(complaints) = promtool_check(page) {
            panic!("{}'s metrics: {complaints}\n{page}", service.name);
        }
    }
}

struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_service_starts_as_the_compose_file_runs_it_and_they_play() {
    let services = compose_services();
    let kinds: Vec<&str> = services.iter().map(|s| s.args[0].as_str()).collect();
    for kind in ["gateway", "authority", "matchmaker", "ratings"] {
        assert!(
            kinds.contains(&kind),
            "compose.yaml runs no {kind}: {kinds:?}"
        );
    }
    deploy(services).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_service_starts_as_the_kubernetes_manifests_run_it_and_they_play() {
    let secrets = BTreeMap::from([
        ("TTAKJI_SERVICE_KEY", SERVICE_KEY.to_owned()),
        ("TTAKJI_TOKEN_KEYS", TOKEN_KEYS.to_owned()),
        // Replaced by the test's own database below.
        (
            "TTAKJI_DATABASE_URL",
            "postgres://postgres:5432/ttakji".to_owned(),
        ),
    ]);
    let services = kubernetes_services(&secrets);
    let kinds: Vec<&str> = services.iter().map(|s| s.args[0].as_str()).collect();
    for kind in ["gateway", "authority", "matchmaker", "ratings"] {
        assert!(
            kinds.contains(&kind),
            "the manifests run no {kind}: {kinds:?}"
        );
    }
    deploy(services).await;
}

#[test]
fn the_compose_file_builds_one_image_for_every_service() {
    let docs = yaml("deploy/compose.yaml");
    let services = docs[0]["services"].as_hash().expect("services");
    let built: Vec<String> = services
        .iter()
        .filter(|(_, s)| !s["build"].is_badvalue())
        .filter_map(|(name, _)| text(name))
        .collect();
    assert_eq!(
        built.len(),
        1,
        "only one service builds the image: {built:?}"
    );
    let image = services
        .iter()
        .find_map(|(_, s)| (!s["build"].is_badvalue()).then(|| s["image"].as_str()))
        .flatten()
        .expect("the built image is named");
    for (name, service) in services {
        if service["command"].as_vec().is_some() && service["image"].as_str() != Some(image) {
            let name = text(name).unwrap_or_default();
            if service["image"]
                .as_str()
                .is_none_or(|i| i.starts_with("ttakji"))
            {
                panic!("{name} does not run the one image {image}");
            }
        }
    }
}

#[test]
fn the_image_runs_as_a_user_with_a_writable_home_and_certificates() {
    let dockerfile = read("deploy/Dockerfile");
    assert!(dockerfile.contains("ca-certificates"), "no CA certificates");
    let user = dockerfile
        .lines()
        .filter_map(|l| l.trim().strip_prefix("USER "))
        .next_back()
        .expect("a USER");
    assert_ne!(user.trim(), "root");
    assert!(
        dockerfile
            .lines()
            .any(|l| l.trim().starts_with("WORKDIR /")),
        "a working directory for serve's SQLite file and key"
    );
    let ignored = read(".dockerignore");
    for path in ["target", "node_modules"] {
        assert!(
            ignored
                .lines()
                .any(|l| l.trim().trim_matches('/').ends_with(path)),
            ".dockerignore leaves {path} in the build context"
        );
    }
}

#[test]
fn the_hosts_of_a_deployment_are_mapped_and_nothing_else() {
    let mut hosts = Hosts::default();
    hosts.map("authority-1", 50052, local(7001));
    hosts.map("redis", 6379, local(7002));
    assert_eq!(
        hosts.rewrite("http://authority-1:50052,http://authority-2:50052"),
        "http://127.0.0.1:7001,http://authority-2:50052"
    );
    assert_eq!(
        hosts.rewrite("redis://redis:6379"),
        "redis://127.0.0.1:7002"
    );
    assert_eq!(hosts.rewrite("k1=change-me"), "k1=change-me");
}
