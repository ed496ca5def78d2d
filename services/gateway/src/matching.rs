//! The public MatchService: the queue, friend challenges and rematches, as
//! streams that report progress and end with the game.
//!
//! Each stream hears the matchmaker's news on the player's bus channel and
//! also asks the matchmaker twice a second, which keeps a queue ticket alive
//! and makes up for any message pub/sub lost. When the client goes away the
//! asking stops, and the matchmaker drops the ticket after its grace.

use std::future::Future;
use std::time::Duration;

use tonic::{Request, Response, Status};
use ttakji_platform::bus::{Delivery, Subscription};
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::match_service_server::MatchService;

use crate::auth::Caller;
use crate::state::Gateway;
use crate::streams::{self, Sender, Stream};
use crate::validate::GameId;

/// How often a waiting stream asks the matchmaker (and so tells it the
/// player is still there: keep it well under the matchmaker's grace).
const POLL: Duration = Duration::from_millis(500);
/// How long a rematch offer waits for the opponent.
const REMATCH_WAIT: Duration = Duration::from_secs(120);
/// Where a player's rating is unknown (a newcomer, or a ratings service
/// that cannot be reached), they are paired as this.
const UNRATED: u32 = 1200;

/// A matchmaker record that a stream follows until it settles.
trait Followed: prost::Message + Default + Clone + Send + 'static {
    /// The record's type name on the player's bus channel.
    const BUS_TYPE: &'static str;
    /// Whether the record has reached its final state, ending the stream.
    fn settled(&self) -> bool;
    /// Whether `self`, heard on the bus, is news of `followed`.
    fn is_news_of(&self, followed: &Self) -> bool;
    /// Whether a failure to read the record ends the stream (else it is
    /// read again at the next poll).
    fn ends_stream(status: &Status) -> bool {
        status.code() == tonic::Code::NotFound
    }
}

impl Followed for pb::Ticket {
    const BUS_TYPE: &'static str = "ttakji.v1.Ticket";
    fn settled(&self) -> bool {
        self.state == pb::TicketState::Matched as i32
            || self.state == pb::TicketState::Cancelled as i32
    }
    fn is_news_of(&self, followed: &Self) -> bool {
        self.ticket_id == followed.ticket_id
    }
}

impl Followed for pb::Challenge {
    const BUS_TYPE: &'static str = "ttakji.v1.Challenge";
    fn settled(&self) -> bool {
        !self.game_id.is_empty()
    }
    fn is_news_of(&self, followed: &Self) -> bool {
        self.code == followed.code
    }
}

impl Followed for pb::AgreeRematchResponse {
    const BUS_TYPE: &'static str = "ttakji.v1.AgreeRematchResponse";
    fn settled(&self) -> bool {
        !self.new_game_id.is_empty()
    }
    /// Only the news that a rematch has started is taken from the bus;
    /// who has agreed so far is asked for.
    fn is_news_of(&self, _: &Self) -> bool {
        self.settled()
    }
    /// Asking again is agreeing again: a refusal is final.
    fn ends_stream(_: &Status) -> bool {
        true
    }
}

/// Waits for the next message of `type_name` on the subscription, or the
/// next poll time, whichever comes first.
async fn next_news(
    sub: &mut Subscription,
    type_name: &str,
    poll: &mut tokio::time::Interval,
) -> Option<Vec<u8>> {
    loop {
        tokio::select! {
            _ = poll.tick() => return None,
            delivery = sub.recv() => match delivery {
                Delivery::Message(envelope) if envelope.r#type == type_name => return Some(envelope.payload.clone()),
                Delivery::Message(_) | Delivery::Gap => {}
                Delivery::Closed => {
                    poll.tick().await;
                    return None;
                }
            },
        }
    }
}

/// Sends `first` and every change of it as `message(record)`, from the bus
/// or by asking with `ask`, until it settles or cannot be read.
async fn follow<R, M, A, F>(
    tx: &Sender<M>,
    mut sub: Subscription,
    first: R,
    message: impl Fn(&R) -> M,
    mut ask: A,
) where
    R: Followed,
    A: FnMut() -> F,
    F: Future<Output = Result<R, Status>>,
{
    let mut last = first;
    let mut poll = tokio::time::interval(POLL);
    loop {
        if tx.send(Ok(message(&last))).await.is_err() || last.settled() {
            return;
        }
        let news = next_news(&mut sub, R::BUS_TYPE, &mut poll).await;
        let fresh = match news.and_then(|bytes| R::decode(bytes.as_slice()).ok()) {
            Some(record) if record.is_news_of(&last) => Ok(record),
            _ => ask().await,
        };
        match fresh {
            Ok(record) => last = record,
            Err(status) if R::ends_stream(&status) => {
                let _ = tx.send(Err(status)).await;
                return;
            }
            // The matchmaker is briefly away: keep the stream and ask again.
            Err(status) => tracing::warn!(%status, record = R::BUS_TYPE, "not read"),
        }
    }
}

impl Gateway {
    /// The ladder's rating of `user_id` on this board size, for pairing.
    async fn pairing_rating(&self, user_id: &str, board_size: u32) -> u32 {
        self.ratings()
            .get_rating(pb::GetRatingRequest {
                user_id: user_id.to_owned(),
                board_size,
            })
            .await
            .ok()
            .and_then(|r| r.into_inner().entry)
            .map_or(UNRATED, |e| u32::try_from(e.rating).unwrap_or(UNRATED))
    }
}

#[tonic::async_trait]
impl MatchService for Gateway {
    type FindMatchStream = Stream<pb::FindMatchResponse>;

    #[tracing::instrument(skip_all, fields(ticket_id))]
    async fn find_match(
        &self,
        request: Request<pb::FindMatchRequest>,
    ) -> Result<Response<Self::FindMatchStream>, Status> {
        let me = Caller::of(&request)?;
        let req = request.into_inner();
        if req.ranked && me.guest {
            return Err(Status::permission_denied(
                "sign in to play ranked games; guests play casual games",
            ));
        }
        let sub = self.news_for(&me.user_id).await?;
        let rating = self.pairing_rating(&me.user_id, req.board_size).await;
        let ticket = self
            .matchmaker()
            .enqueue(pb::EnqueueRequest {
                user_id: me.user_id.clone(),
                nickname: me.nickname,
                rating,
                pool: Some(pb::Pool {
                    board_size: req.board_size,
                    ruleset: req.ruleset,
                    ranked: req.ranked,
                }),
            })
            .await?
            .into_inner()
            .ticket
            .ok_or_else(|| Status::internal("the matchmaker sent no ticket"))?;
        tracing::Span::current().record("ticket_id", ticket.ticket_id.as_str());
        let query = pb::GetTicketRequest {
            ticket_id: ticket.ticket_id.clone(),
            user_id: me.user_id,
        };
        let matchmaker = self.matchmaker();
        let stream = streams::spawn(&self.shutdown, 8, move |tx| async move {
            let ask = || {
                let (mut matchmaker, query) = (matchmaker.clone(), query.clone());
                async move {
                    let answer = matchmaker.get_ticket(query).await?;
                    Ok(answer.into_inner().ticket.unwrap_or_default())
                }
            };
            let message = |t: &pb::Ticket| pb::FindMatchResponse {
                ticket: Some(t.clone()),
            };
            follow(&tx, sub, ticket, message, ask).await;
        });
        Ok(Response::new(stream))
    }

    #[tracing::instrument(skip_all, fields(ticket_id = %request.get_ref().ticket_id))]
    async fn cancel_match(
        &self,
        request: Request<pb::CancelMatchRequest>,
    ) -> Result<Response<pb::CancelMatchResponse>, Status> {
        let me = Caller::of(&request)?;
        let ticket = self
            .matchmaker()
            .cancel_ticket(pb::CancelTicketRequest {
                ticket_id: request.into_inner().ticket_id,
                user_id: me.user_id,
            })
            .await?
            .into_inner()
            .ticket;
        Ok(Response::new(pb::CancelMatchResponse { ticket }))
    }

    type CreateChallengeStream = Stream<pb::CreateChallengeResponse>;

    #[tracing::instrument(skip_all)]
    async fn create_challenge(
        &self,
        request: Request<pb::CreateChallengeRequest>,
    ) -> Result<Response<Self::CreateChallengeStream>, Status> {
        let me = Caller::of(&request)?;
        let sub = self.news_for(&me.user_id).await?;
        let req = request.into_inner();
        let challenge = self
            .matchmaker()
            .make_challenge(pb::MakeChallengeRequest {
                user_id: me.user_id,
                nickname: me.nickname,
                pool: Some(pb::Pool {
                    board_size: req.board_size,
                    ruleset: req.ruleset,
                    ranked: false,
                }),
            })
            .await?
            .into_inner()
            .challenge
            .ok_or_else(|| Status::internal("the matchmaker sent no challenge"))?;
        let query = pb::GetChallengeRequest {
            code: challenge.code.clone(),
        };
        let matchmaker = self.matchmaker();
        let stream = streams::spawn(&self.shutdown, 4, move |tx| async move {
            let ask = || {
                let (mut matchmaker, query) = (matchmaker.clone(), query.clone());
                async move {
                    let answer = matchmaker.get_challenge(query).await?;
                    Ok(answer.into_inner().challenge.unwrap_or_default())
                }
            };
            let message = |c: &pb::Challenge| pb::CreateChallengeResponse {
                challenge: Some(c.clone()),
            };
            follow(&tx, sub, challenge, message, ask).await;
        });
        Ok(Response::new(stream))
    }

    #[tracing::instrument(skip_all)]
    async fn accept_challenge(
        &self,
        request: Request<pb::AcceptChallengeRequest>,
    ) -> Result<Response<pb::AcceptChallengeResponse>, Status> {
        let me = Caller::of(&request)?;
        let joined = self
            .matchmaker()
            .join_challenge(pb::JoinChallengeRequest {
                code: request.into_inner().code,
                user_id: me.user_id,
                nickname: me.nickname,
            })
            .await?
            .into_inner();
        Ok(Response::new(pb::AcceptChallengeResponse {
            game: joined.game,
        }))
    }

    type RematchStream = Stream<pb::RematchResponse>;

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn rematch(
        &self,
        request: Request<pb::RematchRequest>,
    ) -> Result<Response<Self::RematchStream>, Status> {
        let me = Caller::of(&request)?;
        let old = GameId::parse(&request.get_ref().game_id)?;
        let sub = self.news_for(&me.user_id).await?;
        let agree = pb::AgreeRematchRequest {
            game_id: old.into_string(),
            user_id: me.user_id,
        };
        let first = self
            .matchmaker()
            .agree_rematch(agree.clone())
            .await?
            .into_inner();
        let matchmaker = self.matchmaker();
        let stream = streams::spawn(&self.shutdown, 4, move |tx| async move {
            let ask = || {
                let (mut matchmaker, agree) = (matchmaker.clone(), agree.clone());
                async move { Ok(matchmaker.agree_rematch(agree).await?.into_inner()) }
            };
            let message = |r: &pb::AgreeRematchResponse| pb::RematchResponse {
                agreed_user_ids: r.agreed_user_ids.clone(),
                new_game_id: r.new_game_id.clone(),
            };
            // An offer nobody takes up lapses: the stream ends.
            let _ = tokio::time::timeout(REMATCH_WAIT, follow(&tx, sub, first, message, ask)).await;
        });
        Ok(Response::new(stream))
    }
}
