//! The web client, served at `/` of the gateway's own port beside the API.
//!
//! The page is built from `web/app` (`npm run build` in `web/`) and the
//! built folder is embedded in the binary, so running the service needs no
//! Node. Every path the page routes itself (`/`, a game `/g/<id>`, a
//! friend's link `/c/<code>`, the lists `/games` and `/watch`) answers with
//! the page; its scripts and styles
//! are named by their content's hash and cached for good; `/config.json`
//! tells the page what the operator configured.

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use ttakji_platform::grpc::Pages;

#[derive(rust_embed::Embed)]
#[folder = "../../web/app/dist/"]
struct Bundle;

/// What the page needs to know of the deployment.
#[derive(Debug, Clone, Default)]
pub struct PageConfig {
    /// The Google client id for the sign-in button; none hides it.
    pub google_client_id: Option<String>,
}

/// The gateway's pages: the embedded web client and its configuration.
pub fn pages(config: &PageConfig) -> Pages {
    let config =
        Bytes::from(serde_json::json!({ "googleClientId": config.google_client_id }).to_string());
    std::sync::Arc::new(move |request: &http::request::Parts| answer(request, &config))
}

/// Paths the page routes itself: the page answers them all.
fn is_page_route(path: &str) -> bool {
    matches!(path, "/" | "/games" | "/watch") || path.starts_with("/g/") || path.starts_with("/c/")
}

fn answer(request: &http::request::Parts, config: &Bytes) -> Response<Bytes> {
    let path = request.uri.path();
    if path == "/config.json" {
        return respond(
            StatusCode::OK,
            "application/json",
            "no-cache",
            config.clone(),
        );
    }
    let wanted = path.trim_start_matches('/');
    let asset = (!wanted.is_empty() && !wanted.ends_with(".gz"))
        .then(|| Bundle::get(wanted))
        .flatten();
    let (name, file) = match asset {
        Some(file) => (wanted, file),
        None if !is_page_route(path) => {
            return respond(
                StatusCode::NOT_FOUND,
                "text/plain; charset=utf-8",
                "no-cache",
                Bytes::from(format!("{path} is not here: the game is at /\n")),
            );
        }
        None => match Bundle::get("index.html") {
            Some(file) => ("index.html", file),
            None => {
                return respond(
                    StatusCode::NOT_FOUND,
                    "text/plain; charset=utf-8",
                    "no-cache",
                    Bytes::from_static(b"the web client was not built into this server\n"),
                );
            }
        },
    };
    let etag = format!("\"{}\"", hex(&file.metadata.sha256_hash()[..12]));
    let cache = if name.starts_with("assets/") {
        // Named by their content's hash: a new build has new names.
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let mut response = if request
        .headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|v| v.as_bytes() == etag.as_bytes())
    {
        respond(
            StatusCode::NOT_MODIFIED,
            content_type(name),
            cache,
            Bytes::new(),
        )
    } else {
        let gzipped = accepts_gzip(&request.headers)
            .then(|| Bundle::get(&format!("{name}.gz")))
            .flatten();
        let gzip = gzipped.is_some();
        let body = match gzipped.map_or(file.data, |g| g.data) {
            std::borrow::Cow::Borrowed(b) => Bytes::from_static(b),
            std::borrow::Cow::Owned(b) => Bytes::from(b),
        };
        let mut r = respond(StatusCode::OK, content_type(name), cache, body);
        if gzip {
            r.headers_mut()
                .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        }
        r
    };
    let headers = response.headers_mut();
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    if let Ok(v) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, v);
    }
    if name == "index.html" {
        // Scripts from this server only, and Google's sign-in; the
        // computer's engine is WebAssembly in a Worker of this server's.
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'self'; script-src 'self' 'wasm-unsafe-eval' https://accounts.google.com/gsi/client; \
                 worker-src 'self'; \
                 frame-src https://accounts.google.com/gsi/; \
                 connect-src 'self' https://accounts.google.com/gsi/; \
                 style-src 'self' 'unsafe-inline' https://accounts.google.com/gsi/style; \
                 img-src 'self' data: https://*.googleusercontent.com; \
                 base-uri 'none'; frame-ancestors 'none'",
            ),
        );
    }
    response
}

fn respond(
    status: StatusCode,
    content_type: &'static str,
    cache: &'static str,
    body: Bytes,
) -> Response<Bytes> {
    let mut r = Response::new(body);
    *r.status_mut() = status;
    let headers = r.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

fn accepts_gzip(headers: &http::HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            parts.next().is_some_and(|c| c.eq_ignore_ascii_case("gzip"))
                && !parts.any(|p| p.replace(' ', "") == "q=0")
        })
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit('.').next().unwrap_or_default() {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "webmanifest" => "application/manifest+json",
        "woff2" => "font/woff2",
        // Compiled as it streams in (`WebAssembly.instantiateStreaming`).
        "wasm" => "application/wasm",
        _ => "application/octet-stream",
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(path: &str, headers: &[(&'static str, &str)]) -> Response<Bytes> {
        let mut request = http::Request::get(path);
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let (parts, ()) = request.body(()).expect("a request").into_parts();
        answer(&parts, &Bytes::from_static(b"{}"))
    }

    #[test]
    fn every_route_of_the_page_answers_with_the_page() {
        for path in ["/", "/g/0195d3a8", "/c/ABC234", "/games", "/watch"] {
            let r = get(path, &[]);
            assert_eq!(r.status(), StatusCode::OK, "{path}");
            assert_eq!(
                r.headers()[header::CONTENT_TYPE],
                "text/html; charset=utf-8"
            );
            assert!(
                String::from_utf8_lossy(r.body()).contains("<main id=\"app\">"),
                "{path} is the page"
            );
        }
        assert_eq!(get("/nothing.js", &[]).status(), StatusCode::NOT_FOUND);
        assert_eq!(get("/index.html.gz", &[]).status(), StatusCode::NOT_FOUND);
    }

    #[test]
    fn the_pages_script_is_cached_for_good_and_sent_gzipped_to_who_takes_it() {
        let page = String::from_utf8_lossy(get("/", &[]).body()).into_owned();
        let script = page
            .split("src=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .expect("the page names its script");
        assert!(script.starts_with("/assets/"), "{script}");
        let plain = get(script, &[]);
        assert_eq!(plain.status(), StatusCode::OK);
        assert_eq!(
            plain.headers()[header::CACHE_CONTROL],
            "public, max-age=31536000, immutable"
        );
        assert!(plain.headers().get(header::CONTENT_ENCODING).is_none());
        let gzipped = get(script, &[("accept-encoding", "br, gzip")]);
        assert_eq!(gzipped.headers()[header::CONTENT_ENCODING], "gzip");
        assert!(gzipped.body().len() * 2 < plain.body().len());
        assert_eq!(gzipped.body()[..2], [0x1f, 0x8b], "gzip's magic number");
        let refused = get(script, &[("accept-encoding", "gzip;q=0")]);
        assert!(refused.headers().get(header::CONTENT_ENCODING).is_none());
        let etag = plain.headers()[header::ETAG]
            .to_str()
            .expect("ascii")
            .to_owned();
        let again = get(script, &[("if-none-match", &etag)]);
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
        assert!(again.body().is_empty());
    }
}
