//! Lists of games read from their stored rows: a player's games and the
//! live games between people (the gateway's `ListMyGames` and
//! `ListLiveGames`), and the finished games the ratings reconcile from.
//! A page is one query; no game's actor is woken and no move is replayed.
//!
//! A page token names the last game of the page before in the list's
//! order, so a game that begins meanwhile lands on the first page and is
//! never repeated or skipped on a later one (AIP-158).

use baduk::Rules;
use tonic::Status;
use ttakji_proto::GameId;
use ttakji_proto::internal::v1 as internal;
use ttakji_proto::v1 as pb;

use ttakji_platform::store::Database;

use crate::codec;
use crate::records::Seat;
use crate::store::{self, Listing, SummaryRow};
use crate::view;

/// The most games one page holds.
pub const MAX_PAGE: u32 = 100;

/// A refusal of a page token this service did not make for this list.
fn bad_token(why: &str) -> Status {
    ttakji_platform::refusal::refused(
        tonic::Code::InvalidArgument,
        "PAGE_TOKEN_INVALID",
        format!(
            "page_token {why}: pass the next_page_token of the page before, with the same filter"
        ),
    )
}

/// What a request asks for, with its page token read.
///
/// # Errors
/// INVALID_ARGUMENT (`PAGE_TOKEN_INVALID`) for a token this list did not
/// make, or one made for another board size.
pub fn listing(request: &internal::ListGameSummariesRequest) -> Result<Listing, Status> {
    let token = request.page_token.as_str();
    match &request.list {
        Some(internal::list_game_summaries_request::List::UserId(user_id))
            if !user_id.is_empty() =>
        {
            let before = if token.is_empty() {
                None
            } else {
                let rest = token
                    .strip_prefix("p.")
                    .ok_or_else(|| bad_token("is not one of a player's games"))?;
                let (created, id) = rest
                    .split_once('.')
                    .ok_or_else(|| bad_token("is not readable"))?;
                Some((number(created)?, game_id(id)?))
            };
            Ok(Listing::Player {
                user_id: user_id.clone(),
                before,
            })
        }
        Some(internal::list_game_summaries_request::List::Live(true)) => {
            let size = match request.board_size {
                0 => None,
                9 | 13 | 19 => Some(i64::from(request.board_size)),
                other => {
                    return Err(ttakji_platform::refusal::refused(
                        tonic::Code::InvalidArgument,
                        "BOARD_SIZE_NOT_OFFERED",
                        format!("board_size {other} is not offered: 9, 13, 19, or 0 for all"),
                    ));
                }
            };
            let before = if token.is_empty() {
                None
            } else {
                let rest = token
                    .strip_prefix("l.")
                    .ok_or_else(|| bad_token("is not one of the live games list"))?;
                let parts: Vec<&str> = rest.splitn(4, '.').collect();
                let [made_for, rating, created, id] = parts[..] else {
                    return Err(bad_token("is not readable"));
                };
                if number(made_for)? != size.unwrap_or(0) {
                    return Err(bad_token("was made for another board_size"));
                }
                Some((number(rating)?, number(created)?, game_id(id)?))
            };
            Ok(Listing::Live {
                board_size: size,
                before,
            })
        }
        _ => Err(Status::invalid_argument(
            "name a player's user_id or ask for the live games",
        )),
    }
}

fn number(text: &str) -> Result<i64, Status> {
    text.parse().map_err(|_| bad_token("is not readable"))
}

fn game_id(text: &str) -> Result<String, Status> {
    GameId::parse(text)
        .map(GameId::into_string)
        .map_err(|_| bad_token("is not readable"))
}

/// A page of a list, as `ListGameSummaries` answers it: one query for the
/// page and one game more, which says whether another page follows.
///
/// # Errors
/// INVALID_ARGUMENT for a bad token or filter; UNAVAILABLE or INTERNAL when
/// the store cannot be read.
pub async fn page(
    db: &Database,
    request: &internal::ListGameSummariesRequest,
) -> Result<internal::ListGameSummariesResponse, Status> {
    let list = listing(request)?;
    let limit = request.limit.clamp(1, MAX_PAGE) as usize;
    let mut rows = store::list_games(db, &list, limit as i64 + 1)
        .await
        .map_err(|e| ttakji_platform::store::status(&e, "cannot list games"))?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next_page_token = match rows.last() {
        Some(last) if more => next_token(&list, last),
        _ => String::new(),
    };
    let viewer = match &list {
        Listing::Player { user_id, .. } => Some(user_id.as_str()),
        Listing::Live { .. } => None,
    };
    let games = rows
        .iter()
        .map(|row| summary(row, viewer).map_err(|e| unreadable_row(&row.id, &e)))
        .collect::<Result<_, Status>>()?;
    Ok(internal::ListGameSummariesResponse {
        games,
        next_page_token,
    })
}

/// A stored row this server cannot read: the store holds what it never
/// writes.
#[must_use]
pub fn unreadable_row(game_id: &str, why: &str) -> Status {
    tracing::error!(game_id, why, "a stored game row is unreadable");
    Status::internal(format!(
        "game {game_id} is stored in a form this server cannot read"
    ))
}

/// The token of the page after `last`, the last game of a full page.
#[must_use]
pub fn next_token(listing: &Listing, last: &SummaryRow) -> String {
    match listing {
        Listing::Player { .. } => format!("p.{}.{}", last.created_at, last.id),
        Listing::Live { board_size, .. } => format!(
            "l.{}.{}.{}.{}",
            board_size.unwrap_or(0),
            last.ladder_rating,
            last.created_at,
            last.id
        ),
    }
}

/// A row as the wire carries it; `viewer` is the player the list is for.
///
/// # Errors
/// When the row holds something this server never writes.
pub fn summary(row: &SummaryRow, viewer: Option<&str>) -> Result<pb::GameSummary, String> {
    let rules = Rules::named(&row.ruleset).map_err(|e| e.to_string())?;
    let engine = codec::ai_engine(&row.ai_engine).map_err(|e| e.to_string())?;
    let [black, white] = row.seats.clone().map(|(user_id, name, level)| {
        let ai = level.as_deref().map(codec::level).transpose();
        ai.map(|ai| view::seat_pb(&Seat { user_id, name, ai }, false, engine))
    });
    let (black, white) = (
        black.map_err(|e| e.to_string())?,
        white.map_err(|e| e.to_string())?,
    );
    let finished = row.status == "finished";
    let result = match (&row.result, &row.end_reason) {
        (Some(text), Some(reason)) if finished => {
            let reason = codec::end_reason(reason).map_err(|e| e.to_string())?;
            Some(pb::GameResult {
                winner: match text.as_bytes().first() {
                    Some(b'B') => pb::Color::Black,
                    Some(b'W') => pb::Color::White,
                    _ => pb::Color::Unspecified,
                } as i32,
                reason: pb::EndReason::from(reason) as i32,
                text: text.clone(),
                count: None,
            })
        }
        _ => None,
    };
    let your_color = viewer.map_or(pb::Color::Unspecified, |me| {
        if black.user_id == me {
            pb::Color::Black
        } else if white.user_id == me {
            pb::Color::White
        } else {
            pb::Color::Unspecified
        }
    });
    Ok(pb::GameSummary {
        game_id: row.id.clone(),
        board_size: u32::try_from(row.board_size).unwrap_or(0),
        ruleset: row.ruleset.clone(),
        komi: view::komi_points(i32::try_from(row.komi_half).unwrap_or(0)),
        scoring: pb::Scoring::from(rules.scoring) as i32,
        against_computer: black.ai_level != 0 || white.ai_level != 0,
        black: Some(black),
        white: Some(white),
        status: if finished {
            pb::GameStatus::Finished
        } else {
            pb::GameStatus::Playing
        } as i32,
        move_count: u32::try_from(row.move_count).unwrap_or(0),
        result,
        ranked: row.ranked,
        seconds_per_move: u32::try_from(row.seconds_per_move).unwrap_or(0),
        created_at_unix_ms: row.created_at,
        finished_at_unix_ms: row.finished_at.unwrap_or(0),
        your_color: your_color as i32,
        ladder_rating: u32::try_from(row.ladder_rating).unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(
        list: internal::list_game_summaries_request::List,
        size: u32,
        token: &str,
    ) -> internal::ListGameSummariesRequest {
        internal::ListGameSummariesRequest {
            list: Some(list),
            board_size: size,
            limit: 20,
            page_token: token.to_owned(),
        }
    }

    fn row(id: &str, rating: i64, created: i64) -> SummaryRow {
        SummaryRow {
            id: id.to_owned(),
            board_size: 9,
            ruleset: "ttakji".to_owned(),
            komi_half: 14,
            seats: [
                (Some("u1".to_owned()), "jin".to_owned(), None),
                (None, "Easy AI".to_owned(), Some("easy".to_owned())),
            ],
            seconds_per_move: 0,
            status: "finished".to_owned(),
            end_reason: Some("resignation:W".to_owned()),
            result: Some("W+R".to_owned()),
            ranked: false,
            created_at: created,
            finished_at: Some(created + 1),
            move_count: 31,
            ladder_rating: rating,
            ai_engine: "client".to_owned(),
        }
    }

    #[test]
    fn a_token_reads_back_as_the_place_it_was_made_at() {
        use internal::list_game_summaries_request::List;
        let live = listing(&request(List::Live(true), 13, "")).expect("first page");
        let token = next_token(&live, &row("abc", 1612, 77));
        assert_eq!(
            listing(&request(List::Live(true), 13, &token)).expect("next page"),
            Listing::Live {
                board_size: Some(13),
                before: Some((1612, 77, "abc".to_owned()))
            }
        );
        let mine = listing(&request(List::UserId("u1".to_owned()), 0, "")).expect("first page");
        let token = next_token(&mine, &row("def", 0, 99));
        assert_eq!(
            listing(&request(List::UserId("u1".to_owned()), 0, &token)).expect("next page"),
            Listing::Player {
                user_id: "u1".to_owned(),
                before: Some((99, "def".to_owned()))
            }
        );
    }

    #[test]
    fn a_token_for_another_list_or_board_or_garbage_is_refused() {
        use internal::list_game_summaries_request::List;
        let live9 = next_token(
            &Listing::Live {
                board_size: Some(9),
                before: None,
            },
            &row("abc", 0, 1),
        );
        for (list, size, token) in [
            (List::Live(true), 13, live9.as_str()),
            (List::UserId("u1".to_owned()), 0, live9.as_str()),
            (List::Live(true), 0, "p.1.abc"),
            (List::UserId("u1".to_owned()), 0, "p.x.abc"),
            (List::UserId("u1".to_owned()), 0, "p.1.a'b"),
            (List::Live(true), 9, "l.9.1"),
        ] {
            let refused = listing(&request(list, size, token)).expect_err(token);
            assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{token}");
            assert_eq!(
                ttakji_platform::refusal::reason(&refused).as_deref(),
                Some("PAGE_TOKEN_INVALID"),
                "{token}"
            );
        }
    }

    #[test]
    fn a_row_reads_as_a_summary_with_the_viewers_colour_and_result() {
        let s = summary(&row("abc", 0, 5), Some("u1")).expect("readable");
        assert_eq!(s.your_color, pb::Color::Black as i32);
        assert!(s.against_computer);
        let result = s.result.expect("finished");
        assert_eq!(result.winner, pb::Color::White as i32);
        assert_eq!(result.reason, pb::EndReason::Resignation as i32);
        assert_eq!(s.move_count, 31);
        assert_eq!(s.komi, 7.0);
        assert_eq!(
            s.white.expect("white").ai_engine,
            pb::AiEngine::Client as i32
        );
    }
}
