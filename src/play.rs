//! `ttakji play`: a terminal client. Signs in, then plays the computer, or
//! (`--online`) queues for a person, or makes (`--challenge`) or joins
//! (`--join CODE`) a friend's game; draws the board and reads moves (`D5`,
//! `pass`, `undo`, `resign`, `score`, `sgf`, `draw`, `accept`, `decline`,
//! `quit`) until the game is over and counted, and offers a rematch after an
//! online game.

use std::io::{BufRead as _, Write as _};

use anyhow::Context as _;
use baduk::BoardSize;
use tokio::sync::mpsc;
use tonic::Request;
use tonic::metadata::MetadataValue;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::auth_service_client::AuthServiceClient;
use ttakji_proto::v1::game_service_client::GameServiceClient;
use ttakji_proto::v1::ladder_service_client::LadderServiceClient;
use ttakji_proto::v1::match_service_client::MatchServiceClient;

/// `ttakji play` options.
#[derive(Debug, clap::Args)]
pub struct PlayArgs {
    /// The server's address.
    #[arg(long, env = "TTAKJI_SERVER", default_value = "http://127.0.0.1:50051")]
    pub server: String,
    /// Your nickname (2 to 20 letters, digits, '-' or '_').
    #[arg(long, default_value = "guest")]
    pub name: String,
    /// The computer's level: easy, normal or hard.
    #[arg(long, default_value = "normal")]
    pub level: String,
    /// Your colour against the computer: black, white or random.
    #[arg(long, default_value = "random")]
    pub color: String,
    /// Board size: 9, 13 or 19 (9 unless a --classic table says 19).
    #[arg(long)]
    pub size: Option<u32>,
    /// Play a person: wait in the queue for an opponent (the computer steps
    /// in if nobody comes).
    #[arg(long, conflicts_with_all = ["challenge", "join"])]
    pub online: bool,
    /// Make a friend challenge and wait for the friend to join with its code.
    #[arg(long, conflicts_with = "join")]
    pub challenge: bool,
    /// Join a friend's challenge by its code.
    #[arg(long)]
    pub join: Option<String>,
    /// Sign in with a Google ID token instead of as a guest (needed for ranked games).
    #[arg(long, env = "TTAKJI_GOOGLE_ID_TOKEN", hide_env_values = true)]
    pub google_id_token: Option<String>,
    /// With --online: a ranked game (signed-in players only).
    #[arg(long, requires = "online")]
    pub ranked: bool,
    /// With --challenge: seed 001's table (19×19, territory scoring, komi
    /// 6.5, no move time) instead of seed 000's; the options below change it.
    #[arg(long, requires = "challenge")]
    pub classic: bool,
    /// With --challenge: komi for White, 0 (none) to 50 in steps of 0.5.
    #[arg(long, requires = "challenge")]
    pub komi: Option<f64>,
    /// With --challenge: area or territory scoring.
    #[arg(long, requires = "challenge", value_parser = ["area", "territory"])]
    pub scoring: Option<String>,
    /// With --challenge: seconds for each move, 0 for no limit.
    #[arg(long, requires = "challenge", value_name = "SECONDS")]
    pub move_time: Option<u32>,
    /// With --challenge: keep the colours on a rematch instead of swapping.
    #[arg(long, requires = "challenge")]
    pub keep_colors: bool,
    /// With --challenge: whether the computer plays the seat of a player
    /// who is away (on at seed 001's table, off at seed 000's).
    #[arg(long, requires = "challenge", value_name = "on|off", value_parser = ["on", "off"])]
    pub stand_in: Option<String>,
    /// Print the ladder of the board size (the top ten and your place) and exit.
    #[arg(long, conflicts_with_all = ["online", "challenge", "join"])]
    pub ladder: bool,
}

type Channel = tonic::transport::Channel;

struct Client {
    games: GameServiceClient<Channel>,
    matches: MatchServiceClient<Channel>,
    ladder: LadderServiceClient<Channel>,
    token: MetadataValue<tonic::metadata::Ascii>,
    me: String,
}

impl Client {
    fn request<T>(&self, message: T) -> Request<T> {
        let mut request = Request::new(message);
        request
            .metadata_mut()
            .insert("authorization", self.token.clone());
        request
    }
}

fn refused(what: &str) -> impl Fn(tonic::Status) -> anyhow::Error + '_ {
    move |s| anyhow::anyhow!("{what}: {}", s.message())
}

pub fn run(args: &PlayArgs) -> anyhow::Result<()> {
    let level = match args.level.as_str() {
        "easy" => pb::AiLevel::Easy,
        "normal" => pb::AiLevel::Normal,
        "hard" => pb::AiLevel::Hard,
        other => anyhow::bail!("--level {other:?}: use easy, normal or hard"),
    };
    let color = match args.color.as_str() {
        "black" => pb::ColorChoice::Black,
        "white" => pb::ColorChoice::White,
        "random" => pb::ColorChoice::Random,
        other => anyhow::bail!("--color {other:?}: use black, white or random"),
    };
    let lines = stdin_lines();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(play(args, level, color, lines))
}

/// Lines of standard input, read on their own thread.
fn stdin_lines() -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel(4);
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.blocking_send(line).is_err() {
                break;
            }
        }
    });
    rx
}

async fn play(
    args: &PlayArgs,
    level: pb::AiLevel,
    color: pb::ColorChoice,
    mut lines: mpsc::Receiver<String>,
) -> anyhow::Result<()> {
    let channel = tonic::transport::Endpoint::from_shared(args.server.clone())
        .with_context(|| format!("server address {:?}", args.server))?
        .connect()
        .await
        .with_context(|| format!("connecting to {}", args.server))?;
    let mut auth = AuthServiceClient::new(channel.clone());
    let (access_token, user_id) = match &args.google_id_token {
        Some(token) => {
            let signed = auth
                .sign_in_google(pb::SignInGoogleRequest {
                    id_token: token.clone(),
                    nickname: args.name.clone(),
                })
                .await
                .map_err(refused("Google sign-in refused"))?
                .into_inner();
            println!("Signed in as {}.", signed.nickname);
            (signed.access_token, signed.user_id)
        }
        None => {
            let signed = auth
                .sign_in_guest(pb::SignInGuestRequest {
                    nickname: args.name.clone(),
                })
                .await
                .map_err(refused("sign-in refused"))?
                .into_inner();
            (signed.access_token, signed.user_id)
        }
    };
    let client = Client {
        games: GameServiceClient::new(channel.clone()),
        matches: MatchServiceClient::new(channel.clone()),
        ladder: LadderServiceClient::new(channel),
        token: format!("Bearer {access_token}")
            .parse()
            .context("the server's token is not a header value")?,
        me: user_id,
    };
    if args.ladder {
        return print_ladder(&client, args.size.unwrap_or(9)).await;
    }
    let against_people = args.online || args.challenge || args.join.is_some();
    let mut game_id = if args.online {
        queue(&client, args.size.unwrap_or(9), args.ranked).await?
    } else if args.challenge {
        challenge(&client, house_rules(args)).await?
    } else if let Some(code) = &args.join {
        client
            .matches
            .clone()
            .accept_challenge(client.request(pb::AcceptChallengeRequest { code: code.clone() }))
            .await
            .map_err(refused("cannot join"))?
            .into_inner()
            .game
            .context("the server sent no game")?
            .game_id
    } else {
        client
            .games
            .clone()
            .start_ai_game(client.request(pb::StartAiGameRequest {
                board_size: args.size.unwrap_or(9),
                color: color as i32,
                level: level as i32,
                ..Default::default()
            }))
            .await
            .map_err(refused("cannot start a game"))?
            .into_inner()
            .game
            .context("the server sent no game")?
            .game_id
    };
    loop {
        if !play_game(&client, &game_id, &mut lines).await? || !against_people {
            return Ok(());
        }
        println!("Type rematch for another game with colours swapped, or quit.");
        let Some(line) = lines.recv().await else {
            return Ok(());
        };
        if line.trim() != "rematch" {
            return Ok(());
        }
        game_id = rematch(&client, &game_id).await?;
    }
}

/// Waits in the queue; returns the game.
async fn queue(client: &Client, size: u32, ranked: bool) -> anyhow::Result<String> {
    let mut stream = client
        .matches
        .clone()
        .find_match(client.request(pb::FindMatchRequest {
            board_size: size,
            ranked,
            ruleset: String::new(),
        }))
        .await
        .map_err(refused("cannot queue"))?
        .into_inner();
    while let Some(m) = stream
        .message()
        .await
        .map_err(refused("the queue failed"))?
    {
        let Some(t) = m.ticket else { continue };
        match pb::TicketState::try_from(t.state) {
            Ok(pb::TicketState::Matched) => {
                let opponent = t.opponent.unwrap_or_default();
                println!("\nMatched with {}.", opponent.nickname);
                return Ok(t.game_id);
            }
            Ok(pb::TicketState::Cancelled) => anyhow::bail!("you left the queue"),
            _ => {
                print!(
                    "\rWaiting for an opponent: {} s, {} of {} in the queue   ",
                    t.waited_ms / 1000,
                    t.position,
                    t.waiting
                );
                std::io::stdout().flush()?;
            }
        }
    }
    anyhow::bail!("the queue closed without a match")
}

/// The table `--challenge` asks for.
fn house_rules(args: &PlayArgs) -> pb::HouseRules {
    pb::HouseRules {
        preset: if args.classic {
            pb::TablePreset::Classic
        } else {
            pb::TablePreset::Ttakji
        } as i32,
        board_size: args.size.unwrap_or(0),
        komi: args.komi,
        scoring: match args.scoring.as_deref() {
            Some("area") => pb::Scoring::Area,
            Some("territory") => pb::Scoring::Territory,
            _ => pb::Scoring::Unspecified,
        } as i32,
        seconds_per_move: args.move_time,
        keep_colors_on_rematch: args.keep_colors,
        computer_stands_in: args.stand_in.as_deref().map(|s| s == "on"),
    }
}

/// Makes a challenge at a table with `rules`, shows its code, and waits
/// for the friend.
async fn challenge(client: &Client, rules: pb::HouseRules) -> anyhow::Result<String> {
    let mut stream = client
        .matches
        .clone()
        .create_challenge(client.request(pb::CreateChallengeRequest {
            rules: Some(rules),
            ..Default::default()
        }))
        .await
        .map_err(refused("cannot make a challenge"))?
        .into_inner();
    let mut shown = false;
    while let Some(m) = stream
        .message()
        .await
        .map_err(refused("the challenge failed"))?
    {
        let Some(c) = m.challenge else { continue };
        if !c.game_id.is_empty() {
            println!("Your friend has joined.");
            return Ok(c.game_id);
        }
        if !shown {
            println!(
                "Give your friend the code {} (or the link {}); it works once.",
                c.code, c.link
            );
            shown = true;
        }
    }
    anyhow::bail!("the challenge expired")
}

/// Asks for a rematch and waits for the opponent to agree.
async fn rematch(client: &Client, game_id: &str) -> anyhow::Result<String> {
    let mut stream = client
        .matches
        .clone()
        .rematch(client.request(pb::RematchRequest {
            game_id: game_id.to_owned(),
        }))
        .await
        .map_err(refused("no rematch"))?
        .into_inner();
    println!("Waiting for your opponent to agree…");
    while let Some(r) = stream.message().await.map_err(refused("no rematch"))? {
        if !r.new_game_id.is_empty() {
            return Ok(r.new_game_id);
        }
    }
    anyhow::bail!("your opponent did not take the rematch")
}

fn seat_name(p: Option<&pb::Player>) -> String {
    p.map_or_else(String::new, |p| p.nickname.clone())
}

/// Plays one game to its end. Returns false if the player quit.
async fn play_game(
    client: &Client,
    game_id: &str,
    lines: &mut mpsc::Receiver<String>,
) -> anyhow::Result<bool> {
    let mut game = client
        .games
        .clone()
        .get_game(client.request(pb::GetGameRequest {
            game_id: game_id.to_owned(),
            include_score_preview: false,
        }))
        .await
        .map_err(refused("cannot load the game"))?
        .into_inner()
        .game
        .context("the server sent no game")?;
    let mine = if game.black.as_ref().is_some_and(|p| p.user_id == client.me) {
        pb::Color::Black
    } else {
        pb::Color::White
    };
    let opponent = if mine == pb::Color::Black {
        game.white.clone()
    } else {
        game.black.clone()
    };
    let computer = opponent.as_ref().is_some_and(|p| p.user_id.is_empty());
    println!(
        "Game {}: {} (X) against {} (O). You play {}. Type a point (D5), pass, {}resign, score, sgf or quit{}.",
        game.game_id,
        seat_name(game.black.as_ref()),
        seat_name(game.white.as_ref()),
        if mine == pb::Color::Black {
            "Black"
        } else {
            "White"
        },
        if computer { "undo, " } else { "" },
        if computer { "" } else { "; draw offers a draw" },
    );
    let mut events = client
        .games
        .clone()
        .watch_game(client.request(pb::WatchGameRequest {
            game_id: game.game_id.clone(),
            after_seq: game.event_seq,
            changes: false,
        }))
        .await
        .map_err(refused("cannot follow the game"))?
        .into_inner();
    let size = BoardSize::new(game.board_size).map_err(|e| anyhow::anyhow!("{e}"))?;
    loop {
        print!("{}", draw(&game));
        if game.status == pb::GameStatus::Finished as i32 {
            print_result(&game);
            if game.ranked {
                print_rating_change(client, &game.game_id).await;
            }
            return Ok(true);
        }
        if let Some(counting) = game.counting.clone() {
            match count_turn(client, &game, &counting, mine, size, lines, &mut events).await? {
                Some(next) => game = next,
                None => return Ok(false),
            }
            continue;
        }
        if game.draw_offered_by != pb::Color::Unspecified as i32
            && game.draw_offered_by != mine as i32
        {
            println!(
                "Your opponent offers a draw: type accept or decline (a move declines it too)."
            );
        }
        if game.to_move != mine as i32 {
            println!(
                "{} is thinking…",
                if computer {
                    "The computer"
                } else {
                    "Your opponent"
                }
            );
            loop {
                let Some(message) = events
                    .message()
                    .await
                    .map_err(refused("lost the game's events"))?
                else {
                    anyhow::bail!("the server closed the game's events");
                };
                if let Some(p) = message.presence {
                    println!(
                        "Your opponent {}.",
                        match (p.connected, game.computer_stands_in) {
                            (true, _) => "is back",
                            (false, true) =>
                                "has disconnected (the computer plays for them if they stay away)",
                            (false, false) => "has disconnected (their clock keeps running)",
                        }
                    );
                }
                if let Some(kind) = message.event.as_ref().and_then(|e| e.kind.as_ref()) {
                    match kind {
                        pb::game_event::Kind::StandInSeated(s) if s.color != mine as i32 => {
                            println!(
                                "Your opponent is away: the computer plays for them until they return."
                            );
                        }
                        pb::game_event::Kind::StandInLeft(s) if s.color != mine as i32 => {
                            println!("Your opponent is back.");
                        }
                        _ => {}
                    }
                }
                if let Some(snapshot) = message.event.and_then(|e| e.snapshot)
                    && snapshot.event_seq > game.event_seq
                {
                    game = snapshot;
                    if let Some(preview) = &game.score_preview {
                        println!("Your opponent passed. If you pass too: {}", preview.summary);
                    }
                }
                if game.to_move == mine as i32
                    || game.status == pb::GameStatus::Finished as i32
                    || game.counting.is_some()
                {
                    break;
                }
            }
            continue;
        }
        let time_left = game.clock.as_ref().map_or_else(String::new, |c| {
            let left = (c.deadline_unix_ms - ttakji_platform::now_unix_ms()).max(0) / 1000;
            format!(" ({left} s left)")
        });
        print!(
            "{} to play{time_left}> ",
            if mine == pb::Color::Black {
                "Black"
            } else {
                "White"
            }
        );
        std::io::stdout().flush()?;
        let Some(line) = lines.recv().await else {
            println!();
            return Ok(false);
        };
        let command = line.trim().to_ascii_lowercase();
        let next = game.move_count + 1;
        let id = game.game_id.clone();
        let mut games = client.games.clone();
        let answer = match command.as_str() {
            "" => continue,
            "quit" | "exit" => return Ok(false),
            "pass" => games
                .pass(client.request(pb::PassRequest {
                    game_id: id,
                    move_number: next,
                    ..Default::default()
                }))
                .await
                .map(|r| r.into_inner().game),
            "resign" => games
                .resign(client.request(pb::ResignRequest {
                    game_id: id,
                    ..Default::default()
                }))
                .await
                .map(|r| r.into_inner().game),
            "undo" => games
                .undo_move(client.request(pb::UndoMoveRequest {
                    game_id: id,
                    move_count: game.move_count,
                }))
                .await
                .map(|r| r.into_inner().game),
            "draw" => games
                .offer_draw(client.request(pb::OfferDrawRequest { game_id: id }))
                .await
                .map(|r| r.into_inner().game),
            "accept" | "decline" => games
                .answer_draw(client.request(pb::AnswerDrawRequest {
                    game_id: id,
                    accept: command == "accept",
                }))
                .await
                .map(|r| r.into_inner().game),
            "score" => {
                match games
                    .get_score_preview(client.request(pb::GetScorePreviewRequest { game_id: id }))
                    .await
                {
                    Ok(r) => println!(
                        "If the game ended now: {}",
                        r.into_inner().count.map(|c| c.summary).unwrap_or_default()
                    ),
                    Err(s) => println!("No preview: {}", s.message()),
                }
                continue;
            }
            "sgf" => {
                match games
                    .get_sgf(client.request(pb::GetSgfRequest { game_id: id }))
                    .await
                {
                    Ok(r) => println!("{}", r.into_inner().sgf),
                    Err(s) => println!("No record: {}", s.message()),
                }
                continue;
            }
            text => match size.parse_point(text) {
                Ok(p) => games
                    .play_move(client.request(pb::PlayMoveRequest {
                        game_id: id,
                        move_number: next,
                        point: Some(pb::Point {
                            column: u32::from(p.col()),
                            row: u32::from(p.row()),
                        }),
                        ..Default::default()
                    }))
                    .await
                    .map(|r| r.into_inner().game),
                Err(e) => {
                    println!("{e}. Type a point like D5, or pass, resign, score, sgf, quit.");
                    continue;
                }
            },
        };
        match answer {
            Ok(Some(snapshot)) if snapshot.event_seq >= game.event_seq => game = snapshot,
            Ok(_) => {}
            Err(status) => {
                println!("Refused: {}", status.message());
                // The game may have moved on (lost on time, say): look again.
                if let Ok(r) = client
                    .games
                    .clone()
                    .get_game(client.request(pb::GetGameRequest {
                        game_id: game.game_id.clone(),
                        include_score_preview: false,
                    }))
                    .await
                    && let Some(snapshot) = r.into_inner().game
                {
                    game = snapshot;
                }
            }
        }
    }
}

/// One turn of the count of a territory game: shows the marks and waits for
/// the player's command or the opponent's next event, whichever comes
/// first. The game as it is after, or `None` when the player quits.
async fn count_turn(
    client: &Client,
    game: &pb::GameSnapshot,
    counting: &pb::Counting,
    mine: pb::Color,
    size: BoardSize,
    lines: &mut mpsc::Receiver<String>,
    events: &mut tonic::Streaming<pb::WatchGameResponse>,
) -> anyhow::Result<Option<pb::GameSnapshot>> {
    let (mine_done, theirs_done) = if mine == pb::Color::Black {
        (counting.black_confirmed, counting.white_confirmed)
    } else {
        (counting.white_confirmed, counting.black_confirmed)
    };
    let left = (counting.deadline_unix_ms - ttakji_platform::now_unix_ms()).max(0) / 1000;
    println!(
        "Counting: dead stones are x and o. {} · you {} · your opponent {} · {left} s left, then the server's own verdict counts.",
        counting
            .count
            .as_ref()
            .map(|c| c.summary.as_str())
            .unwrap_or_default(),
        if mine_done {
            "confirmed"
        } else {
            "have not confirmed"
        },
        if theirs_done {
            "confirmed"
        } else {
            "has not confirmed"
        },
    );
    print!("Type dead D5, alive D5, confirm, resume (back to play) or resign> ");
    std::io::stdout().flush()?;
    let line = tokio::select! {
        line = lines.recv() => line,
        message = events.message() => {
            let message = message.map_err(refused("lost the game's events"))?;
            let Some(message) = message else {
                anyhow::bail!("the server closed the game's events");
            };
            println!();
            return Ok(Some(
                message
                    .event
                    .and_then(|e| e.snapshot)
                    .filter(|s| s.event_seq > game.event_seq)
                    .unwrap_or_else(|| game.clone()),
            ));
        }
    };
    let Some(line) = line else {
        println!();
        return Ok(None);
    };
    let command = line.trim().to_ascii_lowercase();
    let id = game.game_id.clone();
    let mut games = client.games.clone();
    let words: Vec<&str> = command.split_whitespace().collect();
    let answer = match words.as_slice() {
        [] => return Ok(Some(game.clone())),
        ["quit" | "exit"] => return Ok(None),
        [verb @ ("dead" | "alive"), at] => match size.parse_point(at) {
            Ok(p) => games
                .mark_dead_stones(client.request(pb::MarkDeadStonesRequest {
                    game_id: id,
                    point: Some(pb::Point {
                        column: u32::from(p.col()),
                        row: u32::from(p.row()),
                    }),
                    dead: *verb == "dead",
                }))
                .await
                .map(|r| r.into_inner().game),
            Err(e) => {
                println!("{e}.");
                return Ok(Some(game.clone()));
            }
        },
        ["confirm"] => games
            .confirm_count(client.request(pb::ConfirmCountRequest {
                game_id: id,
                marks_version: counting.marks_version,
            }))
            .await
            .map(|r| r.into_inner().game),
        ["resume"] => games
            .resume_play(client.request(pb::ResumePlayRequest {
                game_id: id,
                after_move: counting.after_move,
            }))
            .await
            .map(|r| r.into_inner().game),
        ["resign"] => games
            .resign(client.request(pb::ResignRequest {
                game_id: id,
                ..Default::default()
            }))
            .await
            .map(|r| r.into_inner().game),
        _ => {
            println!("Not a command while counting: {command}");
            return Ok(Some(game.clone()));
        }
    };
    match answer {
        Ok(Some(snapshot)) if snapshot.event_seq >= game.event_seq => Ok(Some(snapshot)),
        Ok(_) => Ok(Some(game.clone())),
        Err(status) => {
            println!("Refused: {}", status.message());
            let looked = client
                .games
                .clone()
                .get_game(client.request(pb::GetGameRequest {
                    game_id: game.game_id.clone(),
                    include_score_preview: false,
                }))
                .await
                .ok()
                .and_then(|r| r.into_inner().game);
            Ok(Some(looked.unwrap_or_else(|| game.clone())))
        }
    }
}

fn column_letter(c: u32) -> char {
    let letters = b"ABCDEFGHJKLMNOPQRST";
    letters.get(c as usize).map_or('?', |&b| char::from(b))
}

/// The board with coordinates: X Black, O White (x and o for stones marked
/// dead while a territory game is counted), # a point forbidden by ko right
/// now, the last move in brackets.
#[must_use]
pub fn draw(game: &pb::GameSnapshot) -> String {
    let n = game.board_size;
    let letters: String = (0..n).map(|c| format!(" {}", column_letter(c))).collect();
    let last = game.last_move.as_ref().and_then(|m| m.point);
    let mut out = format!("\n   {letters}\n");
    for row in (0..n).rev() {
        out.push_str(&format!("{:>2} ", row + 1));
        for col in 0..n {
            let stone = game
                .stones
                .get((row * n + col) as usize)
                .copied()
                .unwrap_or(0);
            let ko = game
                .ko_forbidden
                .iter()
                .any(|p| p.column == col && p.row == row);
            let dead = game.counting.as_ref().is_some_and(|c| {
                c.dead_stones
                    .iter()
                    .any(|p| p.column == col && p.row == row)
            });
            let glyph = match pb::Color::try_from(stone) {
                Ok(pb::Color::Black) if dead => 'x',
                Ok(pb::Color::White) if dead => 'o',
                Ok(pb::Color::Black) => 'X',
                Ok(pb::Color::White) => 'O',
                _ if ko => '#',
                _ => '.',
            };
            let is_last = last.is_some_and(|p| p.column == col && p.row == row);
            let before = if is_last {
                '['
            } else if col > 0 && last.is_some_and(|p| p.column + 1 == col && p.row == row) {
                ']'
            } else {
                ' '
            };
            out.push(before);
            out.push(glyph);
        }
        let after = if last.is_some_and(|p| p.column + 1 == n && p.row == row) {
            ']'
        } else {
            ' '
        };
        out.push(after);
        out.push_str(&format!("{:>2}\n", row + 1));
    }
    out.push_str(&format!("   {letters}\n"));
    let last_text = match &game.last_move {
        Some(m) => match m.point {
            Some(p) => format!("{}{}", column_letter(p.column), p.row + 1),
            None => "pass".to_owned(),
        },
        None => "none".to_owned(),
    };
    let scoring = if game.scoring == pb::Scoring::Territory as i32 {
        "territory"
    } else {
        "area"
    };
    let time = match game.seconds_per_move {
        0 => "no time limit".to_owned(),
        s => format!("{s} s a move"),
    };
    out.push_str(&format!(
        "Move {} · last {} · captures: Black {}, White {} · komi {} · {scoring} scoring · {time}\n",
        game.move_count, last_text, game.black_captures, game.white_captures, game.komi
    ));
    out
}

/// The ladder's top ten and the player's place.
async fn print_ladder(client: &Client, size: u32) -> anyhow::Result<()> {
    let ladder = client
        .ladder
        .clone()
        .get_ladder(client.request(pb::GetLadderRequest {
            board_size: size,
            top: 10,
        }))
        .await
        .map_err(refused("no ladder"))?
        .into_inner();
    println!("{size}×{size} ladder");
    let line = |e: &pb::LadderEntry| {
        println!(
            "{:>4}. {:<20} {:>5}  ({} games){}",
            e.rank,
            e.nickname,
            e.rating,
            e.games,
            if e.user_id == client.me {
                "  ← you"
            } else {
                ""
            }
        );
    };
    ladder.top.iter().for_each(line);
    if ladder
        .around_me
        .iter()
        .any(|e| e.rank as usize > ladder.top.len())
    {
        println!("   …");
        ladder.around_me.iter().for_each(line);
    } else if ladder.around_me.is_empty() {
        println!("You are not on the ladder yet: play a ranked game.");
    }
    Ok(())
}

/// "Rating: 1200 → 1220 (+20)" once the ratings service has applied the game.
async fn print_rating_change(client: &Client, game_id: &str) {
    for _ in 0..20 {
        if let Ok(r) = client
            .ladder
            .clone()
            .get_my_rating_history(client.request(pb::GetMyRatingHistoryRequest { board_size: 0 }))
            .await
            && let Some(c) = r
                .into_inner()
                .changes
                .into_iter()
                .find(|c| c.game_id == game_id)
        {
            println!(
                "Rating: {} → {} ({:+})",
                c.before,
                c.after,
                c.after - c.before
            );
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    println!("Your rating change is on its way (see --ladder).");
}

fn print_result(game: &pb::GameSnapshot) {
    let Some(result) = &game.result else { return };
    if let Some(count) = &result.count {
        println!("Final count: {}", count.summary);
        if !count.dead_stones.is_empty() {
            let dead: Vec<String> = count
                .dead_stones
                .iter()
                .map(|p| format!("{}{}", column_letter(p.column), p.row + 1))
                .collect();
            println!("Dead stones removed: {}", dead.join(" "));
        }
    }
    println!("Result: {}", result.text);
}

#[cfg(test)]
mod tests {
    use clap::{Args, FromArgMatches as _};

    use super::*;

    fn parse(line: &[&str]) -> Result<PlayArgs, clap::Error> {
        let matches = PlayArgs::augment_args(clap::Command::new("play"))
            .try_get_matches_from(std::iter::once("play").chain(line.iter().copied()))?;
        PlayArgs::from_arg_matches(&matches)
    }

    #[test]
    fn a_challenge_asks_for_the_table_its_options_describe() {
        let plain = parse(&["--challenge"]).expect("parses");
        assert_eq!(
            house_rules(&plain),
            pb::HouseRules {
                preset: pb::TablePreset::Ttakji as i32,
                ..Default::default()
            }
        );
        let classic = parse(&[
            "--challenge",
            "--classic",
            "--size",
            "13",
            "--komi",
            "0",
            "--scoring",
            "area",
            "--move-time",
            "60",
            "--keep-colors",
            "--stand-in",
            "off",
        ])
        .expect("parses");
        assert_eq!(
            house_rules(&classic),
            pb::HouseRules {
                preset: pb::TablePreset::Classic as i32,
                board_size: 13,
                komi: Some(0.0),
                scoring: pb::Scoring::Area as i32,
                seconds_per_move: Some(60),
                keep_colors_on_rematch: true,
                computer_stands_in: Some(false),
            }
        );
        assert!(parse(&["--classic"]).is_err(), "house rules need a table");
        assert!(parse(&["--challenge", "--scoring", "stones"]).is_err());
    }
}
