//! The matchmaker's values on the wire: requests read into domain values
//! once (`TryFrom`), stored values shown as protobuf messages, and the one
//! conversion of a store failure into a gRPC status.

use baduk::Color;
use baduk_ai::Level;
use tonic::Status;
use ttakji_proto::v1 as pb;

use crate::tickets::{ChallengeRecord, Place, PoolKey, State, StoreError, Ticket};

/// Codes are read out and typed: no 0/O, 1/I/L.
pub(crate) const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/// The longest nickname shown to an opponent, in characters.
const NICKNAME_CHARS: usize = 40;

/// The rating of a player the caller gave none for: a newcomer's.
const NEWCOMER_RATING: u32 = 1200;

impl From<StoreError> for Status {
    /// Every store failure is the caller's to retry: the queue is there
    /// again when Redis is.
    fn from(e: StoreError) -> Status {
        tracing::error!(error = %e, "ticket store");
        Status::unavailable("the queue cannot be reached; try again")
    }
}

fn id(value: String, field: &str) -> Result<String, Status> {
    ttakji_platform::grpc::id(&value, field)?;
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
        let board_size = match p.board_size {
            0 => 9,
            9 | 13 | 19 => p.board_size,
            other => {
                return Err(Status::invalid_argument(format!(
                    "board size {other} is not offered: use 9, 13 or 19"
                )));
            }
        };
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

/// A player asking for an opponent.
#[derive(Debug)]
pub(crate) struct Enqueue {
    pub user_id: String,
    pub nickname: String,
    pub rating: u32,
    pub pool: PoolKey,
}

impl TryFrom<pb::EnqueueRequest> for Enqueue {
    type Error = Status;

    fn try_from(req: pb::EnqueueRequest) -> Result<Enqueue, Status> {
        let user_id = id(req.user_id, "user_id")?;
        Ok(Enqueue {
            user_id,
            nickname: nickname(&req.nickname),
            rating: if req.rating == 0 {
                NEWCOMER_RATING
            } else {
                req.rating
            },
            pool: pool_from(req.pool)?,
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

impl TryFrom<pb::GetTicketRequest> for TicketQuery {
    type Error = Status;

    fn try_from(req: pb::GetTicketRequest) -> Result<TicketQuery, Status> {
        TicketQuery::new(req.ticket_id, req.user_id)
    }
}

impl TryFrom<pb::CancelTicketRequest> for TicketQuery {
    type Error = Status;

    fn try_from(req: pb::CancelTicketRequest) -> Result<TicketQuery, Status> {
        TicketQuery::new(req.ticket_id, req.user_id)
    }
}

/// A player making a friend challenge.
#[derive(Debug)]
pub(crate) struct NewChallenge {
    pub maker_id: String,
    pub maker_name: String,
    pub pool: PoolKey,
}

impl TryFrom<pb::MakeChallengeRequest> for NewChallenge {
    type Error = Status;

    fn try_from(req: pb::MakeChallengeRequest) -> Result<NewChallenge, Status> {
        let maker_id = id(req.user_id, "user_id")?;
        Ok(NewChallenge {
            maker_id,
            maker_name: nickname(&req.nickname),
            pool: pool_from(req.pool)?,
        })
    }
}

/// A player joining a friend's challenge by its code.
#[derive(Debug)]
pub(crate) struct JoinChallenge {
    /// Six letters of [`CODE_ALPHABET`], upper case.
    pub code: String,
    pub joiner_id: String,
    pub joiner_name: String,
}

impl TryFrom<pb::JoinChallengeRequest> for JoinChallenge {
    type Error = Status;

    /// Codes are read in any case, around spaces.
    fn try_from(req: pb::JoinChallengeRequest) -> Result<JoinChallenge, Status> {
        let joiner_id = id(req.user_id, "user_id")?;
        let code = req.code.trim().to_ascii_uppercase();
        if code.len() != 6 || !code.bytes().all(|b| CODE_ALPHABET.contains(&b)) {
            return Err(Status::invalid_argument(format!(
                "{:?} is not a challenge code",
                req.code.chars().take(20).collect::<String>()
            )));
        }
        Ok(JoinChallenge {
            code,
            joiner_id,
            joiner_name: nickname(&req.nickname),
        })
    }
}

/// A player of a finished game asking for a rematch.
#[derive(Debug)]
pub(crate) struct RematchAgreement {
    pub game_id: String,
    pub user_id: String,
}

impl TryFrom<pb::AgreeRematchRequest> for RematchAgreement {
    type Error = Status;

    fn try_from(req: pb::AgreeRematchRequest) -> Result<RematchAgreement, Status> {
        Ok(RematchAgreement {
            game_id: id(req.game_id, "game_id")?,
            user_id: id(req.user_id, "user_id")?,
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

pub(crate) fn level_pb(level: Option<Level>) -> pb::AiLevel {
    match level {
        Some(Level::Easy) => pb::AiLevel::Easy,
        Some(Level::Normal) => pb::AiLevel::Normal,
        Some(Level::Hard) => pb::AiLevel::Hard,
        None => pb::AiLevel::Unspecified,
    }
}

fn color_pb(color: Color) -> pb::Color {
    match color {
        Color::Black => pb::Color::Black,
        Color::White => pb::Color::White,
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
            ai_level: level_pb(m.opponent.level) as i32,
        }),
        color: t
            .matched
            .as_ref()
            .map_or(pb::Color::Unspecified, |m| color_pb(m.color)) as i32,
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
            ai_level: 0,
        }),
        game_id: c.game_id.clone().unwrap_or_default(),
        expires_at_unix_ms: c.expires_ms,
    }
}
