//! `ttakji play`: a terminal client. Signs in, starts a game against the
//! computer, draws the board and reads moves (`D5`, `pass`, `undo`,
//! `resign`, `score`, `sgf`, `quit`) until the game is over and counted.

use std::io::{BufRead as _, Write as _};

use anyhow::Context as _;
use baduk::BoardSize;
use tokio::sync::mpsc;
use tonic::Request;
use tonic::metadata::MetadataValue;
use ttakji_proto::v1 as pb;
use ttakji_proto::v1::auth_service_client::AuthServiceClient;
use ttakji_proto::v1::game_service_client::GameServiceClient;

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
    /// Your colour: black, white or random.
    #[arg(long, default_value = "random")]
    pub color: String,
    /// Board size: 9, 13 or 19.
    #[arg(long, default_value_t = 9)]
    pub size: u32,
}

type Channel = tonic::transport::Channel;

struct Client {
    games: GameServiceClient<Channel>,
    token: MetadataValue<tonic::metadata::Ascii>,
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
    let signed_in = AuthServiceClient::new(channel.clone())
        .sign_in_guest(pb::SignInGuestRequest {
            nickname: args.name.clone(),
        })
        .await
        .map_err(|s| anyhow::anyhow!("sign-in refused: {}", s.message()))?
        .into_inner();
    let me = signed_in.user_id.clone();
    let client = Client {
        games: GameServiceClient::new(channel),
        token: format!("Bearer {}", signed_in.access_token)
            .parse()
            .context("the server's token is not a header value")?,
    };
    let mut game = client
        .games
        .clone()
        .start_ai_game(client.request(pb::StartAiGameRequest {
            board_size: args.size,
            color: color as i32,
            level: level as i32,
        }))
        .await
        .map_err(|s| anyhow::anyhow!("cannot start a game: {}", s.message()))?
        .into_inner()
        .game
        .context("the server sent no game")?;
    let mine = if game.black.as_ref().is_some_and(|p| p.user_id == me) {
        pb::Color::Black
    } else {
        pb::Color::White
    };
    println!(
        "Game {} — you play {}. Type a point (D5), pass, undo, resign, score, sgf or quit.",
        game.game_id,
        if mine == pb::Color::Black {
            "Black (X)"
        } else {
            "White (O)"
        }
    );
    let mut events = client
        .games
        .clone()
        .watch_game(client.request(pb::WatchGameRequest {
            game_id: game.game_id.clone(),
            after_seq: game.event_seq,
        }))
        .await
        .map_err(|s| anyhow::anyhow!("cannot follow the game: {}", s.message()))?
        .into_inner();
    let size = BoardSize::new(game.board_size).map_err(|e| anyhow::anyhow!("{e}"))?;
    loop {
        print!("{}", draw(&game));
        if game.status == pb::GameStatus::Finished as i32 {
            print_result(&game);
            return Ok(());
        }
        if game.to_move != mine as i32 {
            println!("The computer is thinking…");
            loop {
                let event = events
                    .message()
                    .await
                    .map_err(|s| anyhow::anyhow!("lost the game's events: {}", s.message()))?
                    .and_then(|r| r.event)
                    .context("the server closed the game's events")?;
                if let Some(snapshot) = event.snapshot
                    && snapshot.event_seq > game.event_seq
                {
                    game = snapshot;
                }
                if game.to_move == mine as i32 || game.status == pb::GameStatus::Finished as i32 {
                    break;
                }
            }
            continue;
        }
        print!(
            "{} to play> ",
            if mine == pb::Color::Black {
                "Black"
            } else {
                "White"
            }
        );
        std::io::stdout().flush()?;
        let Some(line) = lines.recv().await else {
            println!();
            return Ok(());
        };
        let command = line.trim().to_ascii_lowercase();
        let next = game.move_count + 1;
        let id = game.game_id.clone();
        let mut games = client.games.clone();
        let answer = match command.as_str() {
            "" => continue,
            "quit" | "exit" => return Ok(()),
            "pass" => games
                .pass(client.request(pb::PassRequest {
                    game_id: id,
                    move_number: next,
                }))
                .await
                .map(|r| r.into_inner().game),
            "resign" => games
                .resign(client.request(pb::ResignRequest { game_id: id }))
                .await
                .map(|r| r.into_inner().game),
            "undo" => games
                .undo_move(client.request(pb::UndoMoveRequest {
                    game_id: id,
                    move_count: game.move_count,
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
                    }))
                    .await
                    .map(|r| r.into_inner().game),
                Err(e) => {
                    println!("{e}. Type a point like D5, or pass, undo, resign, score, sgf, quit.");
                    continue;
                }
            },
        };
        match answer {
            Ok(Some(snapshot)) if snapshot.event_seq >= game.event_seq => game = snapshot,
            Ok(_) => {}
            Err(status) => println!("Refused: {}", status.message()),
        }
    }
}

fn column_letter(c: u32) -> char {
    let letters = b"ABCDEFGHJKLMNOPQRST";
    letters.get(c as usize).map_or('?', |&b| char::from(b))
}

/// The board with coordinates: X Black, O White, # a point forbidden by
/// ko right now, the last move in brackets.
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
            let glyph = match pb::Color::try_from(stone) {
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
    out.push_str(&format!(
        "Move {} · last {} · captures: Black {}, White {} · komi {}\n",
        game.move_count, last_text, game.black_captures, game.white_captures, game.komi
    ));
    out
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
