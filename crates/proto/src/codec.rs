//! The codec of every generated client and server: prost's, with a small
//! first encode buffer. A server stream keeps its encode buffer for as long
//! as it is open, and tonic's default of 8 KiB cost 16 KiB a live game with
//! both players watching; an event is a few hundred bytes, and a larger
//! message grows the buffer as far as it needs.

use std::marker::PhantomData;

use prost::Message;
use tonic::codec::{BufferSettings, Codec};
use tonic_prost::{ProstCodec, ProstDecoder, ProstEncoder};

/// The first size of a call's encode buffer.
pub const ENCODE_BUFFER: usize = 1024;

/// Bytes encoded before a stream yields to the runtime (tonic's default).
const YIELD_THRESHOLD: usize = 32 * 1024;

/// prost's codec with an encode buffer of [`ENCODE_BUFFER`] to start with.
#[derive(Debug, Clone)]
pub struct SmallBuffers<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for SmallBuffers<T, U> {
    fn default() -> Self {
        SmallBuffers(PhantomData)
    }
}

impl<T, U> Codec for SmallBuffers<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = ProstDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstCodec::<T, U>::raw_encoder(BufferSettings::new(ENCODE_BUFFER, YIELD_THRESHOLD))
    }

    fn decoder(&mut self) -> Self::Decoder {
        ProstCodec::<T, U>::raw_decoder(BufferSettings::default())
    }
}
