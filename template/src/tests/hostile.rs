//! Randomized templates (a fixed seed, so failures reproduce): generated from the template
//! grammar with every function of the map, then mutated byte by byte. Each must end with output
//! or an error within a time bound: no panic, no hang. The costly functions (`bcrypt`,
//! `htpasswd`, PKCS#12 writers) are left out only because they are deliberately slow in a debug
//! build; [`crate::limits::COSTLY_CALL`] bounds them and `limits.rs` tests that.
//!
//! As a fuzz run: `TEMPLATE_FUZZ_SECONDS=600 cargo test --release -p external-secrets-template
//! random_templates` keeps generating for that long from a fresh seed (printed, and settable
//! with `TEMPLATE_FUZZ_SEED` to reproduce a finding).

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use super::sprig::{ESO, SPRIG};
use crate::functions::Arity;
use crate::{Delimiters, render};

/// Generated templates; each is also run mutated.
const CASES: usize = 5000;

/// How long one render may take in a debug build (the work limits end the worst in ~2 s).
const TIME_BOUND: Duration = Duration::from_secs(10);

const SLOW: &[&str] = &[
    "bcrypt",
    "htpasswd",
    "pemToPkcs12",
    "pemToPkcs12Pass",
    "fullPemToPkcs12",
    "fullPemToPkcs12Pass",
    "pemTruststoreToPKCS12",
    "pemTruststoreToPKCS12Pass",
    // Key generation (RSA in an unoptimised test build) and scrypt.
    "genPrivateKey",
    "derivePassword",
    "genCA",
    "genSelfSignedCert",
    "genSignedCert",
];

const LITERALS: &[&str] = &[
    "0",
    "1",
    "-1",
    "3",
    "1000000",
    "9223372036854775807",
    "-9223372036854775808",
    "1e308",
    "0.5",
    "-0.0",
    "'a'",
    "0x7f",
    "true",
    "false",
    "nil",
    "\"\"",
    "\"a\"",
    "\"%v%s%d%x%q%T%!%[2]*.*f\"",
    "\"{\\\"a\\\":[1,{\\\"b\\\":null}]}\"",
    "\"a: [1, {b: ~}]\\n- x\"",
    "\"YWJj\"",
    "\"-----BEGIN \"",
    "\"2006-01-02T15:04:05Z\"",
    "\"1.2.3-rc.1\"",
    "\">= 1.0\"",
    "\"(a+)+$\"",
    "\"a\\nb\\tc\"",
    "`raw`",
    "\"\\xff\\x00\"",
    "\"RSA-OAEP\"",
    "\"SHA256\"",
    "\"leaf\"",
    "\"CERTIFICATE\"",
];

const FIELDS: &[&str] = &[
    ".", "$", ".text", ".json", ".pfx", ".pem", ".binary", ".empty", ".nope",
];

/// xorshift64*: tiny, deterministic, good enough to pick grammar productions.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

struct Generator {
    rng: Rng,
    functions: Vec<&'static str>,
}

impl Generator {
    fn operand(&mut self, depth: usize) -> String {
        match self.rng.below(if depth > 3 { 2 } else { 4 }) {
            0 => self.rng.pick(LITERALS).to_owned(),
            1 => self.rng.pick(FIELDS).to_owned(),
            2 => format!("({})", self.pipeline(depth + 1)),
            _ => "$v".to_owned(),
        }
    }

    fn command(&mut self, depth: usize, first: bool) -> String {
        if first && self.rng.below(4) == 0 {
            return self.operand(depth);
        }
        let name = self.rng.pick(&self.functions);
        // Mostly the arity the function takes (a piped value is the last argument).
        let wanted = match crate::functions::lookup(name).map(|function| function.arity) {
            Some(Arity::Exact(count) | Arity::AtLeast(count)) => count,
            None => 0,
        };
        let count = if self.rng.below(10) == 0 {
            self.rng.below(4)
        } else {
            wanted.saturating_sub(usize::from(!first))
                + self.rng.below(2) * usize::from(wanted == 0)
        };
        let mut command = name.to_owned();
        for _ in 0..count {
            command.push(' ');
            command.push_str(&self.operand(depth));
        }
        command
    }

    fn pipeline(&mut self, depth: usize) -> String {
        let mut pipeline = self.command(depth, true);
        for _ in 0..self.rng.below(3) {
            pipeline.push_str(" | ");
            pipeline.push_str(&self.command(depth, false));
        }
        pipeline
    }

    fn body(&mut self, depth: usize) -> String {
        (0..1 + self.rng.below(3))
            .map(|_| self.node(depth + 1))
            .collect()
    }

    fn node(&mut self, depth: usize) -> String {
        let choice = if depth > 2 {
            self.rng.below(3)
        } else {
            self.rng.below(9)
        };
        match choice {
            0 => "text\n ".to_owned(),
            1 => format!("{{{{ {} }}}}", self.pipeline(0)),
            2 => format!("{{{{- $v = {} -}}}}", self.pipeline(0)),
            3 => format!(
                "{{{{ if {} }}}}{}{{{{ else }}}}{}{{{{ end }}}}",
                self.pipeline(0),
                self.body(depth),
                self.body(depth)
            ),
            4 => format!(
                "{{{{ with {} }}}}{}{{{{ end }}}}",
                self.pipeline(0),
                self.body(depth)
            ),
            5 => format!(
                "{{{{ range $k, $e := {} }}}}{}{{{{ if $k }}}}{{{{ break }}}}{{{{ end }}}}{{{{ end }}}}",
                self.pipeline(0),
                self.body(depth)
            ),
            6 => format!(
                "{{{{ define \"t{depth}\" }}}}{{{{ $v := . }}}}{}{{{{ end }}}}{{{{ template \"t{depth}\" {} }}}}",
                self.body(depth),
                self.operand(0)
            ),
            7 => format!("{{{{ $v := {} }}}}{}", self.pipeline(0), self.body(depth)),
            _ => format!(
                "{{{{ printf {} {} }}}}",
                self.rng.pick(LITERALS),
                self.operand(0)
            ),
        }
    }

    fn template(&mut self) -> String {
        format!("{{{{ $v := . }}}}{}", self.body(0))
    }

    /// Overwrites, inserts or deletes a few bytes (kept valid UTF-8, as sources are).
    fn mutate(&mut self, source: &str) -> String {
        let mut bytes = source.as_bytes().to_vec();
        for _ in 0..1 + self.rng.below(4) {
            let at = self.rng.below(bytes.len() + 1);
            const BYTES: &[u8] = b"{}()|$.\"`'-:=, \n\\/*0a";
            let byte = BYTES[self.rng.below(BYTES.len())];
            match self.rng.below(3) {
                0 if at < bytes.len() => bytes[at] = byte,
                1 if at < bytes.len() => {
                    bytes.remove(at);
                }
                _ => bytes.insert(at, byte),
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

fn data() -> BTreeMap<String, Vec<u8>> {
    let testdata = |name: &str| {
        std::fs::read(format!(
            "{}/testdata/{name}",
            &std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    };
    BTreeMap::from([
        ("text".to_owned(), b"hello world".to_vec()),
        (
            "json".to_owned(),
            br#"{"a": [1, 2.5, "x"], "b": {"c": null}}"#.to_vec(),
        ),
        ("pfx".to_owned(), testdata("pkcs12-nopass.b64")),
        (
            "pem".to_owned(),
            [testdata("pkcs12.key"), testdata("pkcs12.crt")].concat(),
        ),
        ("binary".to_owned(), vec![0, 0xff, 0xfe, b'{', b'{']),
        ("empty".to_owned(), Vec::new()),
    ])
}

fn run(source: &str, data: &BTreeMap<String, Vec<u8>>) {
    let started = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| {
        render("fuzz", source, data, &Delimiters::default())
    }));
    assert!(result.is_ok(), "panicked on {source:?}");
    assert!(
        started.elapsed() < TIME_BOUND,
        "took {:?} on {source:?}",
        started.elapsed()
    );
}

#[test]
fn random_templates_end_without_panic_within_bounds() {
    let functions = SPRIG
        .iter()
        .chain(ESO)
        .copied()
        .filter(|name| crate::is_function(name) && !SLOW.contains(name))
        .collect();
    let fuzz_for = std::env::var("TEMPLATE_FUZZ_SECONDS")
        .ok()
        .and_then(|seconds| seconds.parse().ok())
        .map(Duration::from_secs);
    let seed = std::env::var("TEMPLATE_FUZZ_SEED")
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or(match fuzz_for {
            // A fresh seed per fuzz run; the fixed one keeps the regular test reproducible.
            Some(_) => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |elapsed| elapsed.as_nanos() as u64 | 1),
            None => 0x5EED_0FE5,
        });
    println!("template fuzz seed: {seed}");
    let mut generator = Generator {
        rng: Rng(seed),
        functions,
    };
    let data = data();
    let started = Instant::now();
    let mut cases = 0usize;
    while match fuzz_for {
        Some(limit) => started.elapsed() < limit,
        None => cases < CASES,
    } {
        let source = generator.template();
        run(&source, &data);
        let mutated = generator.mutate(&source);
        run(&mutated, &data);
        cases += 1;
    }
    println!(
        "template fuzz: {cases} templates (and as many mutants) in {:?}",
        started.elapsed()
    );
}
