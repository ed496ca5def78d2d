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
use ttakji_platform::bus::{self, Delivery, Subscription};
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::match_service_server::MatchService;

use crate::MatchmakerClient;
use crate::auth::Caller;
use crate::state::Gateway;
use crate::streams::{self, Sender, Stream};
use crate::validate;

/// How often a waiting stream asks the matchmaker (and so tells it the
/// player is still there: keep it well under the matchmaker's grace).
const POLL: Duration = Duration::from_millis(500);
/// How long a rematch offer waits for the opponent.
const REMATCH_WAIT: Duration = Duration::from_secs(120);
/// Where a player's rating is unknown (a newcomer, or a ratings service
/// that cannot be reached), they are paired as this.
const UNRATED: u32 = 1200;

/// A matchmaker record that a stream follows until it settles.
trait Followed: prost::Name + Default + Clone + PartialEq + Send + 'static {
    /// Messages buffered for a client that reads slowly.
    const BUFFER: usize;
    /// How long the stream may wait for the record to settle, if not for ever.
    const LAPSES_AFTER: Option<Duration> = None;
    /// What the client is sent of the record.
    type Message: Send + 'static;
    /// What the matchmaker is asked for the record.
    type Query: Clone + Send + 'static;

    fn message(&self) -> Self::Message;
    /// Whether the record has reached its final state, ending the stream.
    fn settled(&self) -> bool;
    /// Whether `self`, heard on the bus, is news of `followed`.
    fn is_news_of(&self, followed: &Self) -> bool;
    /// Reads the record afresh.
    fn ask(
        matchmaker: MatchmakerClient,
        query: Self::Query,
    ) -> impl Future<Output = Result<Self, Status>> + Send;
    /// Whether a failure to read the record ends the stream (else it is
    /// read again at the next poll).
    fn ends_stream(status: &Status) -> bool {
        status.code() == tonic::Code::NotFound
    }
}

/// What a queue stream asks with: its ticket, and how to queue its player
/// again should the matchmaker's store lose the ticket (a Redis restarted
/// without its data), keeping the ticket's id and the time it has waited.
#[derive(Debug, Clone)]
struct Queued {
    get: internal::GetTicketRequest,
    enqueue: internal::FindMatchRequest,
    /// The ticket's wait when it was first answered, and when that was.
    waited_ms: i64,
    at: std::time::Instant,
}

impl Followed for pb::Ticket {
    const BUFFER: usize = 8;
    type Message = pb::FindMatchResponse;
    type Query = Queued;

    fn message(&self) -> pb::FindMatchResponse {
        pb::FindMatchResponse {
            ticket: Some(self.clone()),
        }
    }
    fn settled(&self) -> bool {
        self.state == pb::TicketState::Matched as i32
            || self.state == pb::TicketState::Cancelled as i32
    }
    fn is_news_of(&self, followed: &Self) -> bool {
        self.ticket_id == followed.ticket_id
    }
    /// A ticket the matchmaker no longer knows was lost with its store
    /// (a cancelled or expired one is still known): the player is queued
    /// again under the same id, with the wait so far.
    async fn ask(mut matchmaker: MatchmakerClient, query: Self::Query) -> Result<Self, Status> {
        let answer = match matchmaker.get_ticket(query.get.clone()).await {
            Err(status) if status.code() == tonic::Code::NotFound => {
                let waited = i64::try_from(query.at.elapsed().as_millis()).unwrap_or(i64::MAX);
                let again = internal::FindMatchRequest {
                    resume_ticket_id: query.get.ticket_id.clone(),
                    waited_ms: query.waited_ms.saturating_add(waited),
                    ..query.enqueue
                };
                tracing::info!(ticket_id = %query.get.ticket_id, waited_ms = again.waited_ms, "ticket lost by the matchmaker: queued again");
                metrics::counter!("ttakji_tickets_requeued_total").increment(1);
                matchmaker.find_match(again).await?.into_inner().ticket
            }
            answer => answer?.into_inner().ticket,
        };
        Ok(answer.unwrap_or_default())
    }
}

impl Followed for pb::Challenge {
    const BUFFER: usize = 4;
    type Message = pb::CreateChallengeResponse;
    type Query = internal::GetChallengeRequest;

    fn message(&self) -> pb::CreateChallengeResponse {
        pb::CreateChallengeResponse {
            challenge: Some(self.clone()),
        }
    }
    fn settled(&self) -> bool {
        !self.game_id.is_empty()
    }
    fn is_news_of(&self, followed: &Self) -> bool {
        self.code == followed.code
    }
    async fn ask(mut matchmaker: MatchmakerClient, query: Self::Query) -> Result<Self, Status> {
        let answer = matchmaker.get_challenge(query).await?;
        Ok(answer.into_inner().challenge.unwrap_or_default())
    }
}

impl Followed for internal::RematchResponse {
    const BUFFER: usize = 4;
    /// An offer nobody takes up lapses: the stream ends.
    const LAPSES_AFTER: Option<Duration> = Some(REMATCH_WAIT);
    type Message = pb::RematchResponse;
    /// Asking is agreeing again, which says who has agreed so far.
    type Query = internal::RematchRequest;

    fn message(&self) -> pb::RematchResponse {
        pb::RematchResponse {
            agreed_user_ids: self.agreed_user_ids.clone(),
            new_game_id: self.new_game_id.clone(),
        }
    }
    fn settled(&self) -> bool {
        !self.new_game_id.is_empty()
    }
    /// Only the news that a rematch has started is taken from the bus;
    /// who has agreed so far is asked for.
    fn is_news_of(&self, _: &Self) -> bool {
        self.settled()
    }
    async fn ask(mut matchmaker: MatchmakerClient, query: Self::Query) -> Result<Self, Status> {
        Ok(matchmaker.rematch(query).await?.into_inner())
    }
    /// A refusal to agree is final.
    fn ends_stream(_: &Status) -> bool {
        true
    }
}

/// Waits for the next message on the subscription, or the next poll
/// time, whichever comes first.
async fn next_news<R: Followed>(
    sub: &mut Subscription<R>,
    poll: &mut tokio::time::Interval,
) -> Option<R> {
    loop {
        tokio::select! {
            _ = poll.tick() => return None,
            delivery = sub.recv() => match delivery {
                Delivery::Message { message, .. } => return Some(*message),
                Delivery::Gap => {}
                Delivery::Closed => {
                    poll.tick().await;
                    return None;
                }
            },
        }
    }
}

/// Sends `first` and every change of it, from the bus or by asking the
/// matchmaker at each poll, until it settles or cannot be read. A record is
/// sent only when it differs from the last one sent, and news on the bus
/// about something else waits for the poll: asking can itself cause news
/// (agreeing to a rematch again tells both players), so asking on every
/// notice fed itself.
async fn follow<R: Followed>(
    tx: &Sender<R::Message>,
    mut sub: Subscription<R>,
    first: R,
    matchmaker: MatchmakerClient,
    query: R::Query,
) {
    let mut last = first;
    if tx.send(Ok(last.message())).await.is_err() || last.settled() {
        return;
    }
    let mut poll = tokio::time::interval(POLL);
    loop {
        let fresh = match next_news(&mut sub, &mut poll).await {
            Some(record) if record.is_news_of(&last) => Ok(record),
            Some(_) => continue,
            None => R::ask(matchmaker.clone(), query.clone()).await,
        };
        match fresh {
            Ok(record) if record == last => {}
            Ok(record) => {
                last = record;
                if tx.send(Ok(last.message())).await.is_err() || last.settled() {
                    return;
                }
            }
            Err(status) if R::ends_stream(&status) => {
                let _ = tx.send(Err(status)).await;
                return;
            }
            // The matchmaker is briefly away: keep the stream and ask again.
            Err(status) => tracing::warn!(%status, record = R::NAME, "not read"),
        }
    }
}

impl Gateway {
    /// A stream of `first` and its changes (see [`follow`]).
    fn following<R: Followed>(
        &self,
        sub: Subscription<R>,
        first: R,
        query: R::Query,
    ) -> Stream<R::Message> {
        let matchmaker = self.matchmaker();
        streams::spawn(&self.shutdown, R::BUFFER, move |tx| async move {
            let follow = follow(&tx, sub, first, matchmaker, query);
            match R::LAPSES_AFTER {
                Some(wait) => {
                    let _ = tokio::time::timeout(wait, follow).await;
                }
                None => follow.await,
            }
        })
    }

    /// The ladder's rating of `user_id` on this board size, for pairing.
    async fn pairing_rating(&self, user_id: &str, board_size: u32) -> u32 {
        self.ratings()
            .get_rating(internal::GetRatingRequest {
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
        validate::text(&req.ruleset, "ruleset")?;
        if req.ranked && me.guest {
            return Err(ttakji_platform::refusal::refused(
                tonic::Code::PermissionDenied,
                "RANKED_NEEDS_SIGN_IN",
                "sign in to play ranked games; guests play casual games",
            ));
        }
        let sub = self.news(&bus::tickets(&me.user_id)).await?;
        let rating = self.pairing_rating(&me.user_id, req.board_size).await;
        let enqueue = internal::FindMatchRequest {
            user_id: me.user_id.clone(),
            nickname: me.nickname,
            rating,
            pool: Some(pb::Pool {
                board_size: req.board_size,
                ruleset: req.ruleset,
                ranked: req.ranked,
            }),
            resume_ticket_id: String::new(),
            waited_ms: 0,
        };
        let ticket = self
            .matchmaker()
            .find_match(enqueue.clone())
            .await?
            .into_inner()
            .ticket
            .ok_or_else(|| Status::internal("the matchmaker sent no ticket"))?;
        tracing::Span::current().record("ticket_id", ticket.ticket_id.as_str());
        let query = Queued {
            get: internal::GetTicketRequest {
                ticket_id: ticket.ticket_id.clone(),
                user_id: me.user_id,
            },
            enqueue,
            waited_ms: ticket.waited_ms,
            at: std::time::Instant::now(),
        };
        Ok(Response::new(self.following(sub, ticket, query)))
    }

    #[tracing::instrument(skip_all, fields(ticket_id = %request.get_ref().ticket_id))]
    async fn cancel_match(
        &self,
        request: Request<pb::CancelMatchRequest>,
    ) -> Result<Response<pb::CancelMatchResponse>, Status> {
        let me = Caller::of(&request)?;
        let ticket_id = request.into_inner().ticket_id;
        validate::text(&ticket_id, "ticket_id")?;
        let ticket = self
            .matchmaker()
            .cancel_match(internal::CancelMatchRequest {
                ticket_id,
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
        let req = request.into_inner();
        validate::text(&req.ruleset, "ruleset")?;
        // House rules, when given, say the pool too; otherwise the pool's
        // fields as sent, and the defaults for the rest.
        let (board_size, ruleset, table) = match &req.rules {
            Some(rules) => {
                let table = validate::Table::parse(rules)?;
                (table.board_size, table.ruleset.to_owned(), Some(table))
            }
            None => (req.board_size, req.ruleset, None),
        };
        let made = internal::CreateChallengeRequest {
            user_id: me.user_id.clone(),
            nickname: me.nickname.clone(),
            pool: Some(pb::Pool {
                board_size,
                ruleset,
                ranked: false,
            }),
            komi_half_points: table.as_ref().and_then(|t| t.komi_half),
            seconds_per_move: table.as_ref().and_then(|t| t.seconds_per_move),
            keep_colors_on_rematch: table.as_ref().is_some_and(|t| t.keep_colors),
            computer_stands_in: table.is_some_and(|t| t.stand_in),
        };
        let sub = self.news(&bus::challenges(&me.user_id)).await?;
        let challenge = self
            .matchmaker()
            .create_challenge(made)
            .await?
            .into_inner()
            .challenge
            .ok_or_else(|| Status::internal("the matchmaker sent no challenge"))?;
        let query = internal::GetChallengeRequest {
            code: challenge.code.clone(),
        };
        Ok(Response::new(self.following(sub, challenge, query)))
    }

    #[tracing::instrument(skip_all)]
    async fn accept_challenge(
        &self,
        request: Request<pb::AcceptChallengeRequest>,
    ) -> Result<Response<pb::AcceptChallengeResponse>, Status> {
        let me = Caller::of(&request)?;
        let viewer = me.user_id.clone();
        let code = request.into_inner().code;
        validate::text(&code, "code")?;
        let joined = self
            .matchmaker()
            .accept_challenge(internal::AcceptChallengeRequest {
                code,
                user_id: me.user_id,
                nickname: me.nickname,
            })
            .await?
            .into_inner();
        Ok(Response::new(pb::AcceptChallengeResponse {
            game: crate::seen::seen_by(joined.game, &viewer),
        }))
    }

    type RematchStream = Stream<pb::RematchResponse>;

    #[tracing::instrument(skip_all, fields(game_id = %request.get_ref().game_id))]
    async fn rematch(
        &self,
        request: Request<pb::RematchRequest>,
    ) -> Result<Response<Self::RematchStream>, Status> {
        let me = Caller::of(&request)?;
        let old = validate::game_id(&request.get_ref().game_id)?;
        let sub = self.news(&bus::rematches(&me.user_id)).await?;
        let agree = internal::RematchRequest {
            game_id: old.into_string(),
            user_id: me.user_id,
        };
        let first = self.matchmaker().rematch(agree.clone()).await?.into_inner();
        Ok(Response::new(self.following(sub, first, agree)))
    }
}

#[cfg(test)]
mod tests {
    use ttakji_proto::internal::v1 as internal;
    use ttakji_proto::v1 as pb;

    use super::Followed;

    #[test]
    fn a_ticket_settles_once_matched_or_cancelled_and_hears_only_its_own_news() {
        let ticket = |id: &str, state: pb::TicketState| pb::Ticket {
            ticket_id: id.to_owned(),
            state: state as i32,
            ..pb::Ticket::default()
        };
        assert!(!ticket("t1", pb::TicketState::Waiting).settled());
        assert!(ticket("t1", pb::TicketState::Matched).settled());
        assert!(ticket("t1", pb::TicketState::Cancelled).settled());
        let mine = ticket("t1", pb::TicketState::Waiting);
        assert!(ticket("t1", pb::TicketState::Matched).is_news_of(&mine));
        assert!(!ticket("t2", pb::TicketState::Matched).is_news_of(&mine));
        let gone = tonic::Status::not_found("no such ticket");
        assert!(pb::Ticket::ends_stream(&gone), "not even queued again");
        assert!(!pb::Ticket::ends_stream(&tonic::Status::unavailable(
            "away"
        )));
    }

    #[test]
    fn a_rematch_hears_from_the_bus_only_that_it_has_started_and_ends_on_any_refusal() {
        let rematch = |new_game_id: &str| internal::RematchResponse {
            new_game_id: new_game_id.to_owned(),
            ..internal::RematchResponse::default()
        };
        let waiting = rematch("");
        assert!(!waiting.settled());
        assert!(!rematch("").is_news_of(&waiting));
        assert!(rematch("g2").is_news_of(&waiting));
        assert!(rematch("g2").settled());
        let away = tonic::Status::unavailable("away");
        assert!(internal::RematchResponse::ends_stream(&away));
    }
}
