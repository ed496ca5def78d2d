//! Arbitrary bytes sent as the request of every public method: the gateway
//! never answers INTERNAL or UNKNOWN (nor falls over); what does not decode
//! is INVALID_ARGUMENT with a reason from `docs/errors.md`, and the gateway
//! serves as before afterwards.

mod support;

use std::time::Duration;

use prost::Message as _;
use prost::bytes::{Buf as _, BufMut as _};
use support::{embedded, sign_in, sqlite_memory};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::{Code, Status};
use ttakji_platform::bus::Bus;

/// Requests and answers as raw bytes.
#[derive(Debug, Clone, Copy, Default)]
struct Raw;

impl Codec for Raw {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = Raw;
    type Decoder = Raw;
    fn encoder(&mut self) -> Raw {
        Raw
    }
    fn decoder(&mut self) -> Raw {
        Raw
    }
}

impl Encoder for Raw {
    type Item = Vec<u8>;
    type Error = Status;
    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for Raw {
    type Item = Vec<u8>;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
        let n = src.remaining();
        Ok(Some(src.copy_to_bytes(n).to_vec()))
    }
}

/// Every public method: its path and whether it answers with a stream.
fn public_methods() -> Vec<(String, bool)> {
    let set = prost_types::FileDescriptorSet::decode(ttakji_proto::FILE_DESCRIPTOR_SET)
        .expect("the compiled contracts");
    let public = [
        "AuthService",
        "GameService",
        "LadderService",
        "MatchService",
    ];
    let mut methods = Vec::new();
    for file in set.file {
        for service in file.service {
            let name = service.name.clone().unwrap_or_default();
            if !public.contains(&name.as_str()) {
                continue;
            }
            for m in service.method {
                methods.push((
                    format!("/ttakji.v1.{name}/{}", m.name.unwrap_or_default()),
                    m.server_streaming.unwrap_or(false),
                ));
            }
        }
    }
    methods
}

/// Payloads: random bytes of many lengths, and a few shapes that look like
/// protobuf (a field with a length beyond the end, a huge varint).
fn payloads() -> Vec<Vec<u8>> {
    let mut rng = baduk::SplitMix64::new(16);
    let mut out: Vec<Vec<u8>> = vec![
        vec![0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f],
        vec![
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ],
        vec![0x0a, 0x03, 0xff, 0xfe, 0xfd],
        vec![0x12, 0x7f],
        vec![0xff],
    ];
    for len in 1..40 {
        out.push((0..len).map(|_| (rng.next() & 0xff) as u8).collect());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arbitrary_bytes_into_every_public_method_are_refused_as_invalid_never_internal() {
    let service = embedded(sqlite_memory().await, Bus::in_process()).await;
    let url = format!("http://{}", service.gateway);
    let jin = sign_in(&url, "jin").await;
    let methods = public_methods();
    assert!(methods.len() >= 20, "{methods:?}");
    let mut invalid = 0;
    for (path, streaming) in &methods {
        for payload in payloads() {
            let mut grpc = tonic::client::Grpc::new(jin.channel.clone());
            grpc.ready().await.expect("ready");
            let request = jin.req(payload.clone());
            let route: http::uri::PathAndQuery = path.parse().expect("path");
            let answer = tokio::time::timeout(Duration::from_secs(5), async {
                if *streaming {
                    grpc.server_streaming(request, route, Raw).await.map(|_| ())
                } else {
                    grpc.unary(request, route, Raw).await.map(|_| ())
                }
            })
            .await;
            // A stream that opened and waits for news is fine: it decoded.
            let Ok(answer) = answer else { continue };
            if let Err(status) = answer {
                assert!(
                    !matches!(status.code(), Code::Internal | Code::Unknown),
                    "{path} answered {payload:02x?} with {status:?}"
                );
                // Every refusal says why in a form a program reads.
                support::documented_reason(&status);
                if status.code() == Code::InvalidArgument {
                    invalid += 1;
                }
            }
        }
    }
    assert!(
        invalid > methods.len(),
        "only {invalid} INVALID_ARGUMENT answers"
    );
    // Still serving.
    jin.start(ttakji_proto::v1::ColorChoice::Black).await;
}
