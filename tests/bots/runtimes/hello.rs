// A hello-world protocol bot in Rust (std only; a thread, as the runtime's own).
use std::io::{self, BufRead, Write};

fn main() {
    let stdin = io::stdin();
    let mut lines = stdin.lock().lines();
    if lines.next().is_none() {
        return;
    }
    let name = std::thread::spawn(|| "hello-rust").join().unwrap();
    let mut out = io::stdout();
    writeln!(out, "{{\"name\": \"{}\"}}", name).unwrap();
    out.flush().unwrap();
    for line in lines {
        let line = line.unwrap();
        if line.contains("\"end\"") {
            break;
        }
        writeln!(out, "{{\"real_move\": \"rock\"}}").unwrap();
        out.flush().unwrap();
    }
}
