//! The matchmaker's values on the wire: requests read into domain values
//! once (`TryFrom`), stored values shown as protobuf messages, and the one
//! conversion of a store failure into a gRPC status.

use tonic::Status;
use ttakji_proto::convert;
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::v1 as pb;
use ttakji_proto::{GameId, UserId};

use crate::tickets::{ChallengeRecord, Place, PoolKey, State, StoreError, TableTerms, Ticket};

/// Codes are read out and typed: no 0/O, 1/I/L.
pub(crate) const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/// The longest nickname shown to an opponent, in characters.
const NICKNAME_CHARS: usize = 40;

/// The rating of a player the caller gave none for: a newcomer's.
const NEWCOMER_RATING: u32 = 1200;

impl From<StoreError> for Status {
    /// A store failure is the caller's to retry (the queue is there again
    /// when Redis is), unless what Redis holds or answered cannot be read
    /// by this server: a retry cannot help that, FAILED_PRECONDITION.
    fn from(e: StoreError) -> Status {
        use ::redis::ErrorKind;
        if let StoreError::Redis(r) = &e
            && matches!(
                r.kind(),
                ErrorKind::Parse
                    | ErrorKind::UnexpectedReturnType
                    | ErrorKind::Client
                    | ErrorKind::InvalidClientConfig
            )
        {
            tracing::error!(error = %e, "ticket store holds what this server cannot read");
            return Status::failed_precondition(
                "the queue's store cannot be used by this server; retrying will not help",
            );
        }
        tracing::error!(error = %e, "ticket store");
        Status::unavailable("the queue cannot be reached; try again")
    }
}

fn id(value: String, field: &str) -> Result<String, Status> {
    ttakji_proto::ids::check(&value, field)?;
    Ok(value)
}

fn nickname(s: &str) -> String {
    s.chars().take(NICKNAME_CHARS).collect()
}

/// A user id that may be left empty: empty means "anyone".
fn optional(user_id: String) -> Option<String> {
    (!user_id.is_empty()).then_some(user_id)
}

impl TryFrom<pb::Pool> for PoolKey {
    type Error = Status;

    /// Board 9 and the ttakji rules unless told otherwise.
    fn try_from(p: pb::Pool) -> Result<PoolKey, Status> {
        let board_size = u32::from(convert::board_size(p.board_size)?.get());
        let ruleset = if p.ruleset.is_empty() {
            "ttakji".to_owned()
        } else {
            p.ruleset
        };
        baduk::Preset::parse(&ruleset).map_err(|e| Status::invalid_argument(e.to_string()))?;
        Ok(PoolKey {
            board_size,
            ruleset,
            ranked: p.ranked,
        })
    }
}

fn pool_from(p: Option<pb::Pool>) -> Result<PoolKey, Status> {
    PoolKey::try_from(p.unwrap_or_default())
}

/// A player and the pool they ask for: someone queueing, or making a
/// friend challenge.
#[derive(Debug)]
pub(crate) struct PlayerInPool {
    pub user_id: UserId,
    pub nickname: String,
    pub pool: PoolKey,
}

impl PlayerInPool {
    fn new(user_id: String, name: &str, pool: Option<pb::Pool>) -> Result<PlayerInPool, Status> {
        Ok(PlayerInPool {
            user_id: UserId::from_wire(user_id)?,
            nickname: nickname(name),
            pool: pool_from(pool)?,
        })
    }
}

/// A player asking for an opponent.
#[derive(Debug)]
pub(crate) struct FindMatch {
    pub player: PlayerInPool,
    pub rating: u32,
    /// A lost ticket queued again: its id and the milliseconds waited.
    pub resume: Option<(String, i64)>,
}

impl TryFrom<internal::FindMatchRequest> for FindMatch {
    type Error = Status;

    fn try_from(req: internal::FindMatchRequest) -> Result<FindMatch, Status> {
        let resume = match optional(req.resume_ticket_id) {
            None => None,
            Some(ticket_id) => {
                if req.waited_ms < 0 {
                    return Err(Status::invalid_argument(format!(
                        "waited_ms must not be negative (was {})",
                        req.waited_ms
                    )));
                }
                Some((id(ticket_id, "resume_ticket_id")?, req.waited_ms))
            }
        };
        Ok(FindMatch {
            player: PlayerInPool::new(req.user_id, &req.nickname, req.pool)?,
            rating: if req.rating == 0 {
                NEWCOMER_RATING
            } else {
                req.rating
            },
            resume,
        })
    }
}

/// A question about one ticket: from anyone, or from its player (whose
/// stream keeps it alive).
#[derive(Debug)]
pub(crate) struct TicketQuery {
    pub ticket_id: String,
    pub user_id: Option<String>,
}

impl TicketQuery {
    fn new(ticket_id: String, user_id: String) -> Result<TicketQuery, Status> {
        Ok(TicketQuery {
            ticket_id: id(ticket_id, "ticket_id")?,
            user_id: optional(user_id),
        })
    }

    /// Not found, in the words a player is told.
    pub fn not_yours(&self) -> Status {
        Status::not_found(format!("there is no ticket {} of yours", self.ticket_id))
    }
}

impl TryFrom<internal::GetTicketRequest> for TicketQuery {
    type Error = Status;

    fn try_from(req: internal::GetTicketRequest) -> Result<TicketQuery, Status> {
        TicketQuery::new(req.ticket_id, req.user_id)
    }
}

impl TryFrom<internal::CancelMatchRequest> for TicketQuery {
    type Error = Status;

    fn try_from(req: internal::CancelMatchRequest) -> Result<TicketQuery, Status> {
        TicketQuery::new(req.ticket_id, req.user_id)
    }
}

impl TryFrom<internal::CreateChallengeRequest> for PlayerInPool {
    type Error = Status;

    fn try_from(req: internal::CreateChallengeRequest) -> Result<PlayerInPool, Status> {
        PlayerInPool::new(req.user_id, &req.nickname, req.pool)
    }
}

/// The house rules of a challenge beyond its pool. The authority checks
/// the komi and the clock again when it makes the game; here they are only
/// kept from being absurd.
pub(crate) fn table_terms(req: &internal::CreateChallengeRequest) -> Result<TableTerms, Status> {
    if let Some(k) = req.komi_half_points {
        convert::komi(k)?;
    }
    if let Some(s) = req.seconds_per_move
        && s > 3600
    {
        return Err(Status::invalid_argument(format!(
            "{s} seconds a move is more than an hour"
        )));
    }
    Ok(TableTerms {
        komi_half: req.komi_half_points,
        seconds_per_move: req.seconds_per_move,
        keep_colors: req.keep_colors_on_rematch,
        stand_in: req.computer_stands_in,
    })
}

/// A snapshot's komi (points, a multiple of 0.5) in half points.
pub(crate) fn komi_half_points(komi: f64) -> Result<i32, Status> {
    let half = komi * 2.0;
    if half.fract() != 0.0 || !(0.0..=100.0).contains(&half) {
        return Err(Status::internal(format!(
            "the game's komi {komi} is not one"
        )));
    }
    // Whole and within 0..=100, checked above.
    #[allow(clippy::cast_possible_truncation)]
    Ok(half as i32)
}

/// A player joining a friend's challenge by its code.
#[derive(Debug)]
pub(crate) struct AcceptChallenge {
    /// Six letters of [`CODE_ALPHABET`], upper case.
    pub code: String,
    pub joiner_id: UserId,
    pub joiner_name: String,
}

impl TryFrom<internal::AcceptChallengeRequest> for AcceptChallenge {
    type Error = Status;

    /// Codes are read in any case, around spaces.
    fn try_from(req: internal::AcceptChallengeRequest) -> Result<AcceptChallenge, Status> {
        let joiner_id = UserId::from_wire(req.user_id)?;
        let code = req.code.trim().to_ascii_uppercase();
        if code.len() != 6 || !code.bytes().all(|b| CODE_ALPHABET.contains(&b)) {
            return Err(Status::invalid_argument(format!(
                "{:?} is not a challenge code",
                req.code.chars().take(20).collect::<String>()
            )));
        }
        Ok(AcceptChallenge {
            code,
            joiner_id,
            joiner_name: nickname(&req.nickname),
        })
    }
}

/// A player of a finished game asking for a rematch.
#[derive(Debug)]
pub(crate) struct RematchAgreement {
    pub game_id: GameId,
    pub user_id: UserId,
}

impl TryFrom<internal::RematchRequest> for RematchAgreement {
    type Error = Status;

    fn try_from(req: internal::RematchRequest) -> Result<RematchAgreement, Status> {
        Ok(RematchAgreement {
            game_id: GameId::from_wire(req.game_id)?,
            user_id: UserId::from_wire(req.user_id)?,
        })
    }
}

pub(crate) fn pool_pb(p: &PoolKey) -> pb::Pool {
    pb::Pool {
        board_size: p.board_size,
        ruleset: p.ruleset.clone(),
        ranked: p.ranked,
    }
}

fn state_pb(state: State) -> pb::TicketState {
    match state {
        State::Waiting => pb::TicketState::Waiting,
        State::Pairing => pb::TicketState::Pairing,
        State::Matched => pb::TicketState::Matched,
        State::Cancelled => pb::TicketState::Cancelled,
    }
}

/// A ticket as its player sees it at `now_ms`: the game and opponent once
/// matched, the place in the queue while waiting.
pub(crate) fn ticket_pb(t: &Ticket, place: Place, now_ms: i64) -> pb::Ticket {
    let matched = t.matched.as_ref().filter(|_| t.state == State::Matched);
    pb::Ticket {
        ticket_id: t.id.clone(),
        user_id: t.user_id.clone(),
        pool: Some(pool_pb(&t.pool)),
        state: state_pb(t.state) as i32,
        waited_ms: now_ms - t.enqueued_ms,
        position: place.position,
        waiting: place.waiting,
        game_id: matched.and(t.game_id.clone()).unwrap_or_default(),
        opponent: matched.map(|m| pb::Player {
            user_id: m.opponent.user_id.clone(),
            nickname: m.opponent.nickname.clone(),
            ai_level: m
                .opponent
                .level
                .map_or(pb::AiLevel::Unspecified, pb::AiLevel::from) as i32,
            ..Default::default()
        }),
        color: t
            .matched
            .as_ref()
            .map_or(pb::Color::Unspecified, |m| pb::Color::from(m.color)) as i32,
    }
}

/// A challenge as its players see it; its link is `link_base` and the code.
pub(crate) fn challenge_pb(c: &ChallengeRecord, link_base: &str) -> pb::Challenge {
    pb::Challenge {
        code: c.code.clone(),
        link: format!("{link_base}{}", c.code),
        pool: Some(pool_pb(&c.pool)),
        maker: Some(pb::Player {
            user_id: c.maker_id.clone(),
            nickname: c.maker_name.clone(),
            ..Default::default()
        }),
        game_id: c.game_id.clone().unwrap_or_default(),
        expires_at_unix_ms: c.expires_ms,
    }
}

#[cfg(test)]
mod tests {
    use baduk::Color;
    use baduk_ai::Level;
    use tonic::Code;

    use super::*;
    use crate::tickets::{Match, Opponent};

    #[test]
    fn a_lost_connection_is_retried_and_an_unreadable_answer_is_not() {
        let lost = StoreError::Redis(::redis::RedisError::from(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "reset",
        )));
        assert_eq!(Status::from(lost).code(), Code::Unavailable);
        let unreadable = StoreError::Redis(::redis::RedisError::from((
            ::redis::ErrorKind::UnexpectedReturnType,
            "not a ticket",
        )));
        assert_eq!(Status::from(unreadable).code(), Code::FailedPrecondition);
    }

    fn nine() -> PoolKey {
        PoolKey {
            board_size: 9,
            ruleset: "ttakji".to_owned(),
            ranked: false,
        }
    }

    fn join(code: &str) -> Result<AcceptChallenge, Status> {
        AcceptChallenge::try_from(internal::AcceptChallengeRequest {
            code: code.to_owned(),
            user_id: "u1".to_owned(),
            nickname: "ahn".to_owned(),
        })
    }

    #[test]
    fn an_empty_pool_is_the_casual_nine_by_nine_ttakji_pool() {
        assert_eq!(pool_from(None).expect("pool"), nine());
        let ranked = pool_from(Some(pb::Pool {
            board_size: 19,
            ruleset: "japanese".to_owned(),
            ranked: true,
        }))
        .expect("pool");
        assert_eq!(ranked.encode(), "19:japanese:r");
    }

    #[test]
    fn a_board_or_ruleset_not_offered_is_refused() {
        let board = pool_from(Some(pb::Pool {
            board_size: 11,
            ..pb::Pool::default()
        }))
        .expect_err("11x11");
        assert_eq!(board.code(), Code::InvalidArgument);
        assert_eq!(
            board.message(),
            "board size 11 is not offered: use 9, 13 or 19"
        );
        let rules = pool_from(Some(pb::Pool {
            ruleset: "ing".to_owned(),
            ..pb::Pool::default()
        }))
        .expect_err("ing");
        assert_eq!(rules.code(), Code::InvalidArgument);
    }

    #[test]
    fn a_newcomer_counts_as_1200_and_a_long_nickname_is_cut() {
        let req = FindMatch::try_from(internal::FindMatchRequest {
            user_id: "u1".to_owned(),
            nickname: "가".repeat(50),
            rating: 0,
            pool: None,
            ..internal::FindMatchRequest::default()
        })
        .expect("enqueue");
        assert_eq!(req.rating, 1200);
        assert!(req.resume.is_none());
        let resumed = FindMatch::try_from(internal::FindMatchRequest {
            user_id: "u1".to_owned(),
            resume_ticket_id: "t1".to_owned(),
            waited_ms: 4_000,
            ..internal::FindMatchRequest::default()
        })
        .expect("a lost ticket queued again");
        assert_eq!(resumed.resume, Some(("t1".to_owned(), 4_000)));
        let negative = FindMatch::try_from(internal::FindMatchRequest {
            user_id: "u1".to_owned(),
            resume_ticket_id: "t1".to_owned(),
            waited_ms: -1,
            ..internal::FindMatchRequest::default()
        })
        .expect_err("a negative wait");
        assert_eq!(negative.code(), Code::InvalidArgument);
        assert_eq!(req.player.nickname.chars().count(), 40);
        let nobody =
            FindMatch::try_from(internal::FindMatchRequest::default()).expect_err("no user");
        assert_eq!(nobody.code(), Code::InvalidArgument);
        assert_eq!(nobody.message(), "user_id is empty");
    }

    #[test]
    fn a_ticket_query_without_a_user_is_anyones() {
        let query = TicketQuery::try_from(internal::GetTicketRequest {
            ticket_id: "t1".to_owned(),
            user_id: String::new(),
        })
        .expect("query");
        assert_eq!(query.user_id, None);
        assert_eq!(
            query.not_yours().message(),
            "there is no ticket t1 of yours"
        );
    }

    #[test]
    fn a_challenge_code_is_read_in_any_case_around_spaces() {
        assert_eq!(join("  abc234 ").expect("code").code, "ABC234");
        for wrong in ["ABC10O", "ABC23", "ABC2345"] {
            let refused = join(wrong).expect_err(wrong);
            assert_eq!(refused.code(), Code::InvalidArgument, "{wrong}");
            assert_eq!(
                refused.message(),
                format!("{wrong:?} is not a challenge code")
            );
        }
    }

    #[test]
    fn a_store_failure_asks_the_caller_to_try_again() {
        let status = Status::from(StoreError::Contended {
            user_id: "u1".to_owned(),
            attempts: 8,
        });
        assert_eq!(status.code(), Code::Unavailable);
        assert_eq!(status.message(), "the queue cannot be reached; try again");
    }

    #[test]
    fn a_claimed_ticket_shows_no_game_until_it_is_matched() {
        let mut t = Ticket::waiting("t1".into(), "u1".into(), "ahn".into(), 1200, nine(), 1_000);
        let waiting = ticket_pb(
            &t,
            Place {
                position: 2,
                waiting: 5,
            },
            4_000,
        );
        assert_eq!(
            (
                waiting.state,
                waiting.position,
                waiting.waiting,
                waiting.waited_ms
            ),
            (pb::TicketState::Waiting as i32, 2, 5, 3_000)
        );
        t.state = State::Pairing;
        t.game_id = Some("g1".to_owned());
        let pairing = ticket_pb(&t, Place::default(), 4_000);
        assert_eq!((pairing.game_id.as_str(), pairing.opponent), ("", None));
        t.state = State::Matched;
        t.matched = Some(Match {
            color: Color::Black,
            opponent: Opponent {
                user_id: String::new(),
                nickname: "Easy AI".to_owned(),
                level: Some(Level::Easy),
            },
        });
        let matched = ticket_pb(&t, Place::default(), 4_000);
        assert_eq!(matched.game_id, "g1");
        assert_eq!(matched.color, pb::Color::Black as i32);
        let opponent = matched.opponent.expect("opponent");
        assert_eq!(opponent.nickname, "Easy AI");
        assert_eq!(opponent.ai_level, pb::AiLevel::Easy as i32);
    }
}
