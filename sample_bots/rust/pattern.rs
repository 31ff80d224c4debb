//! pattern-rs: an n-gram pattern matcher.
//!
//! For every context length k = 0..=6 it keeps, per context of the last k joint
//! rounds (our real move, their visible move), decayed counts of what the
//! opponent showed next. Each length is scored by how its best reply would have
//! done lately; the best-scoring length that has seen the current context is
//! used, and its best reply played. If every length is losing it plays at
//! random. Long contexts catch cycles and scripted opponents, short ones catch
//! habits, and the scoring lets it drop whichever the opponent learns to feed.
//!
//! A single file with no crates: build with `rustc -O -o pattern_rs pattern.rs`.
//! The few JSON fields needed are found by key, tolerant of spacing; lines of
//! any length are read (protocol/README.md describes the wire format).

use std::collections::HashMap;
use std::io::{self, BufRead, Write};

const ALL: [&str; 5] = ["rock", "paper", "scissors", "lizard", "spock"];
/// DEFEATS5[i][j]: ALL[i] beats ALL[j].
const DEFEATS5: [[bool; 5]; 5] = [
    [false, false, true, true, false], // rock: scissors, lizard
    [true, false, false, false, true], // paper: rock, spock
    [false, true, false, true, false], // scissors: paper, lizard
    [false, true, false, false, true], // lizard: paper, spock
    [true, false, true, false, false], // spock: scissors, rock
];
const MAX_ORDER: usize = 6;
const COUNT_DECAY: f64 = 0.9;
const SCORE_DECAY: f64 = 0.95;
const GIVE_UP: f64 = -2.0;

/// The value of `"key"` in a JSON object line: the bytes after the colon.
fn find_value<'a>(line: &'a [u8], key: &str) -> Option<&'a [u8]> {
    let k = key.as_bytes();
    for i in 0..line.len() {
        if line[i] != b'"'
            || !line[i + 1..].starts_with(k)
            || line.get(i + 1 + k.len()) != Some(&b'"')
        {
            continue;
        }
        let mut j = i + 2 + k.len();
        while j < line.len() && line[j].is_ascii_whitespace() {
            j += 1;
        }
        if j < line.len() && line[j] == b':' {
            j += 1;
            while j < line.len() && line[j].is_ascii_whitespace() {
                j += 1;
            }
            return Some(&line[j..]);
        }
    }
    None
}

/// A JSON string value without escapes (all the fields we read are plain words).
fn read_string(v: Option<&[u8]>) -> Option<String> {
    let v = v?;
    if v.first() != Some(&b'"') {
        return None;
    }
    let end = v[1..].iter().position(|&c| c == b'"')?;
    String::from_utf8(v[1..1 + end].to_vec()).ok()
}

fn read_number(v: Option<&[u8]>) -> Option<u64> {
    let v = v?;
    let digits: Vec<u8> = v
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .cloned()
        .collect();
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

fn read_moves(hello: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(v) = find_value(hello, "moves") {
        if v.first() == Some(&b'[') {
            let mut rest = &v[1..];
            loop {
                let skip = rest
                    .iter()
                    .take_while(|c| c.is_ascii_whitespace() || **c == b',')
                    .count();
                rest = &rest[skip..];
                match read_string(Some(rest)) {
                    Some(name) => {
                        rest = &rest[name.len() + 2..];
                        out.push(name);
                    }
                    None => break,
                }
            }
        }
    }
    if out.is_empty() {
        let game = read_string(find_value(hello, "game")).unwrap_or_default();
        let n = if game == "roshambo" { 3 } else { 5 };
        out = ALL[..n].iter().map(|s| s.to_string()).collect();
    }
    out
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

struct Pattern {
    moves: Vec<String>,
    pay: Vec<Vec<f64>>,
    rng: Rng,
    joint: Vec<i64>, // our * n + theirs, -1 where unknown
    tables: Vec<HashMap<u64, Vec<f64>>>,
    scores: Vec<f64>,
    ctx: Vec<Option<u64>>, // the context each order used for the last prediction
    advice: Vec<Option<usize>>, // each order's best reply last round
}

impl Pattern {
    fn new(moves: Vec<String>, seed: u64) -> Pattern {
        let n = moves.len();
        let idx = |m: &str| ALL.iter().position(|a| *a == m);
        let mut pay = vec![vec![0.0; n]; n];
        for a in 0..n {
            for b in 0..n {
                if let (Some(x), Some(y)) = (idx(&moves[a]), idx(&moves[b])) {
                    pay[a][b] = if DEFEATS5[x][y] {
                        1.0
                    } else if DEFEATS5[y][x] {
                        -1.0
                    } else {
                        0.0
                    };
                }
            }
        }
        Pattern {
            moves,
            pay,
            rng: Rng(seed),
            joint: Vec::new(),
            tables: (0..=MAX_ORDER).map(|_| HashMap::new()).collect(),
            scores: vec![0.0; MAX_ORDER + 1],
            ctx: vec![None; MAX_ORDER + 1],
            advice: vec![None; MAX_ORDER + 1],
        }
    }

    fn index(&self, name: &Option<String>) -> Option<usize> {
        let name = name.as_ref()?;
        self.moves.iter().position(|m| m == name)
    }

    /// The key of the last k joint rounds, or None if one of them is unknown.
    fn context(&self, k: usize) -> Option<u64> {
        if self.joint.len() < k {
            return None;
        }
        let base = (self.moves.len() * self.moves.len() + 1) as u64;
        let mut key: u64 = 0;
        for &s in &self.joint[self.joint.len() - k..] {
            if s < 0 {
                return None;
            }
            key = key.wrapping_mul(base).wrapping_add(s as u64 + 1);
        }
        Some(key)
    }

    fn best_reply(&mut self, counts: &[f64]) -> usize {
        let n = self.moves.len();
        let mut best: Vec<usize> = Vec::new();
        let mut best_ev = f64::NEG_INFINITY;
        for a in 0..n {
            let ev: f64 = (0..n).map(|b| self.pay[a][b] * counts[b]).sum();
            if ev > best_ev + 1e-9 {
                best_ev = ev;
                best.clear();
            }
            if (ev - best_ev).abs() <= 1e-9 {
                best.push(a);
            }
        }
        best[self.rng.below(best.len())]
    }

    fn turn(&mut self, mine: Option<usize>, seen: Option<usize>) -> usize {
        let n = self.moves.len();
        if let Some(o) = seen {
            for k in 0..=MAX_ORDER {
                if let Some(a) = self.advice[k] {
                    self.scores[k] = SCORE_DECAY * self.scores[k] + self.pay[a][o];
                }
                if let Some(key) = self.ctx[k] {
                    let counts = self.tables[k].entry(key).or_insert_with(|| vec![0.0; n]);
                    for c in counts.iter_mut() {
                        *c *= COUNT_DECAY;
                    }
                    counts[o] += 1.0;
                }
            }
        }
        if !self.joint.is_empty() || mine.is_some() || seen.is_some() {
            self.joint.push(match (mine, seen) {
                (Some(m), Some(o)) => (m * n + o) as i64,
                _ => -1,
            });
        }
        let mut choice: Option<(f64, usize)> = None;
        for k in 0..=MAX_ORDER {
            self.ctx[k] = self.context(k);
            let counts = self.ctx[k]
                .and_then(|key| self.tables[k].get(&key))
                .cloned();
            self.advice[k] = counts.map(|c| self.best_reply(&c));
            if let Some(a) = self.advice[k] {
                // Ties go to the longer context: it is the more specific evidence.
                let better = match choice {
                    None => true,
                    Some((s, _)) => self.scores[k] >= s,
                };
                if better {
                    choice = Some((self.scores[k], a));
                }
            }
        }
        match choice {
            Some((score, a)) if score > GIVE_UP => a,
            _ => self.rng.below(n),
        }
    }
}

fn main() {
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut line: Vec<u8> = Vec::new();
    if input.read_until(b'\n', &mut line).unwrap_or(0) == 0 {
        return;
    }
    let seed = read_number(find_value(&line, "seed")).unwrap_or(1);
    let mut bot = Pattern::new(read_moves(&line), seed);
    let _ = writeln!(out, "{{\"name\": \"pattern-rs\", \"version\": \"1\"}}");
    let _ = out.flush();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let kind = read_string(find_value(&line, "type"));
        match kind.as_deref() {
            Some("end") => break,
            Some("turn") => {}
            _ => continue,
        }
        let round = read_number(find_value(&line, "round")).unwrap_or(0);
        let seen = bot.index(&read_string(find_value(&line, "opponent_last_visible")));
        let mine = bot.index(&read_string(find_value(&line, "self_last_real")));
        let m = bot.turn(mine, seen);
        let _ = writeln!(
            out,
            "{{\"round\": {}, \"real_move\": \"{}\"}}",
            round, bot.moves[m]
        );
        let _ = out.flush();
    }
}
