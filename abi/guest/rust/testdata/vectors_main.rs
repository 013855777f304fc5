//! vectors_main.rs: the Rust SDK's vector check, built natively by
//! abi/guest/rust_test.go with Debian's rustc against ../realizar.rs. It
//! speaks the protocol of ../../c/testdata/vectors_main.c: commands on stdin,
//! one per line, each answered on one line of stdout, every float as its
//! bits in hex:
//!
//!   rng SEED              -> 8 next outputs, then 8 uniform bits
//!   exp XBITS             -> exp(x) bits
//!   sort N ID... LBITS... -> the ids in contract order
//!   softmax N TBITS SEED LBITS... -> N prob bits, the sum bits, 16 draws
//!   parse TEXT            -> parse_f64's bits, or "err"
//!   keys HEX              -> object_members' keys: the count, then each key in hex ("-" for empty)
use std::io::{self, BufRead, Write};

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("a hex number")
}

fn main() {
    let stdin = io::stdin();
    let mut out = io::BufWriter::new(io::stdout());
    for line in stdin.lock().lines() {
        let line = line.expect("stdin");
        let f: Vec<&str> = line.split_whitespace().collect();
        let mut words: Vec<String> = Vec::new();
        match f.first().copied() {
            Some("rng") => {
                let mut r = realizar::Rng::new(hex(f[1]));
                for _ in 0..8 {
                    words.push(format!("0x{:016x}", r.next_u64()));
                }
                for _ in 0..8 {
                    words.push(format!("0x{:016x}", r.uniform().to_bits()));
                }
            }
            Some("exp") => words.push(format!("0x{:016x}", realizar::exp(f64::from_bits(hex(f[1]))).to_bits())),
            Some("sort") => {
                let n: usize = f[1].parse().unwrap();
                let mut ids: Vec<i32> = f[2..2 + n].iter().map(|s| s.parse().unwrap()).collect();
                let mut ls: Vec<f32> = f[2 + n..2 + 2 * n].iter().map(|s| f32::from_bits(hex(s) as u32)).collect();
                realizar::sort_candidates(&mut ids, &mut ls);
                words.extend(ids.iter().map(|id| id.to_string()));
            }
            Some("softmax") => {
                let n: usize = f[1].parse().unwrap();
                let temp = f64::from_bits(hex(f[2]));
                let seed = hex(f[3]);
                let ls: Vec<f32> = f[4..4 + n].iter().map(|s| f32::from_bits(hex(s) as u32)).collect();
                let mut probs = vec![0.0; n];
                let sum = realizar::softmax(&mut probs, &ls, temp);
                words.extend(probs.iter().map(|p| format!("0x{:016x}", p.to_bits())));
                words.push(format!("0x{:016x}", sum.to_bits()));
                let mut r = realizar::Rng::new(seed);
                for _ in 0..16 {
                    words.push(realizar::draw(&probs, sum, r.uniform()).to_string());
                }
            }
            Some("parse") => words.push(match realizar::parse_f64(f[1].as_bytes()) {
                Some(v) => format!("0x{:016x}", v.to_bits()),
                None => "err".to_string(),
            }),
            Some("keys") => {
                let bytes: Vec<u8> = if f[1] == "-" {
                    Vec::new()
                } else {
                    (0..f[1].len() / 2).map(|i| u8::from_str_radix(&f[1][2 * i..2 * i + 2], 16).unwrap()).collect()
                };
                let mut keys: Vec<String> = Vec::new();
                let ok = realizar::object_members(&bytes, |k, _| {
                    keys.push(if k.is_empty() { "-".to_string() } else { k.iter().map(|b| format!("{:02x}", b)).collect() });
                    true
                });
                words.push(if ok { keys.len().to_string() } else { "-1".to_string() });
                if ok {
                    words.extend(keys);
                }
            }
            _ => words.push("unknown".to_string()),
        }
        writeln!(out, "{}", words.join(" ")).unwrap();
    }
}
