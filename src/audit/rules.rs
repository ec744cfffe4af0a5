//! The lock-API table as data: which calls take which kind of lock, and
//! what each kind can fence. The bundled table is `rules/kinds.yaml` and
//! `rules/locks.yaml` (embedded in the binary); `fencesim audit --rules
//! FILE` adds a user's own, in the same format, for an in-house lock
//! library.
//!
//! A rule describes a call by the shapes of its syntax (the callee's name,
//! its receiver, its first argument, the libraries the file uses), the
//! same whichever language's tree the call comes from. A bad file is the
//! user's mistake: an error at `FILE:LINE:COL`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Deserialize;

use super::Kind;

const KINDS_YAML: &str = include_str!("rules/kinds.yaml");
const LOCKS_YAML: &str = include_str!("rules/locks.yaml");

/// A kind of lock, as a rule file declares it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KindDef {
    /// Its name in the output.
    pub(crate) id: String,
    /// What it is, in words.
    pub(crate) label: String,
    /// The token its API hands out with the lock, in words.
    #[serde(default)]
    pub(crate) token: Option<String>,
    /// Why it cannot fence, for a kind that hands out no token.
    #[serde(default)]
    pub(crate) no_token: Option<String>,
    /// The bundled scenarios showing what goes wrong: the first one
    /// `scenarios/` holds, else the last.
    pub(crate) scenarios: Vec<String>,
    /// What the audit matches, in a sentence.
    pub(crate) description: String,
    /// For a kind whose API hands out no token: names (lowercased) that
    /// read one from the lock's own metadata (a ZooKeeper lock node's
    /// `czxid`); read in the lock's scope, its writes are judged by it.
    #[serde(default)]
    pub(crate) metadata_tokens: Vec<String>,
}

/// Names a receiver may have.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Names {
    /// There is a receiver.
    #[serde(default)]
    any: bool,
    /// It is one of these.
    #[serde(default)]
    is: Vec<String>,
    /// It holds one of these.
    #[serde(default)]
    contains: Vec<String>,
}

impl Names {
    fn matches(&self, receiver: Option<&str>) -> bool {
        Names::matches_parts(self.any, &self.is, &self.contains, receiver)
    }

    fn matches_parts(
        any: bool,
        is: &[String],
        contains: &[String],
        receiver: Option<&str>,
    ) -> bool {
        let Some(r) = receiver else {
            return false;
        };
        any || is.iter().any(|n| n == r) || contains.iter().any(|n| r.contains(n.as_str()))
    }

    fn lowercase(&mut self) {
        lower_all(&mut self.is);
        lower_all(&mut self.contains);
    }
}

/// A call that binds a client: `dlm = Redlock(…)`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Shape {
    calls: Vec<String>,
    #[serde(default)]
    receiver: Option<Names>,
}

/// What a rule asks of a call's receiver: any of these.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Receiver {
    /// There is a receiver.
    #[serde(default)]
    any: bool,
    /// It is one of these.
    #[serde(default)]
    is: Vec<String>,
    /// It holds one of these.
    #[serde(default)]
    contains: Vec<String>,
    /// A name assigned from one of these calls.
    #[serde(default)]
    assigned_from: Vec<Shape>,
    /// Also these names, once one of `assigned_from` is in the file.
    #[serde(default)]
    or_named: Vec<String>,
    /// A name declared in the file (a parameter, a field, a constructor
    /// property, a variable) with one of these types: `redsync.Redsync`
    /// for `rs *redsync.Redsync`, `RLock` for `private final RLock lock`.
    #[serde(default)]
    typed: Vec<String>,
}

/// The first argument's shape.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum FirstArg {
    /// A string literal.
    String,
    /// A string literal starting with `/`.
    Path,
    /// A string literal not starting with `/`.
    Name,
    /// Any argument, a literal or not (`r.lock(key_of(job))`).
    Any,
}

/// The first argument of a call, as a rule's `first_arg` looks at it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FirstArgSeen<'a> {
    /// Its text, if it is a string literal (after a Go `ctx`).
    pub literal: Option<&'a str>,
    /// Whether the call is given any argument.
    pub given: bool,
}

/// One rule: which calls (or annotation) take a lock of `kind`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleDef {
    id: String,
    kind: String,
    #[serde(default)]
    calls: Vec<String>,
    #[serde(default)]
    annotation: Option<String>,
    #[serde(default)]
    receiver: Option<Receiver>,
    #[serde(default)]
    uses: Vec<String>,
    #[serde(default)]
    uses_none: Vec<String>,
    #[serde(default)]
    first_arg: Option<FirstArg>,
    #[serde(default)]
    nx: bool,
    #[serde(default)]
    keyword: Option<String>,
    #[serde(default)]
    unless_file_calls: Vec<String>,
    /// The call's arguments, spaces removed, hold one of these.
    #[serde(default)]
    args_contain: Vec<String>,
    /// Only in files of these languages (`sql`, `go`, …).
    #[serde(default)]
    languages: Vec<String>,
    /// The calls are also looked for in query strings: a statement (one
    /// that starts with a verb) calling one of them.
    #[serde(default)]
    in_queries: bool,
    /// Of `calls`, those whose lock the database holds for the
    /// transaction that took it (`pg_advisory_xact_lock`).
    #[serde(default)]
    transaction_calls: Vec<String>,
    /// Words (lowercased, spaces removed) in the statement that make such a
    /// call's lock the session's instead (`@lockowner='session'`).
    #[serde(default)]
    session_when: Vec<String>,
    /// The library, as its users know it (`go-redsync/redsync`).
    #[serde(default)]
    library: Option<String>,
    /// The ecosystems whose code it is in (`go`, `java`, `python`, …).
    #[serde(default)]
    ecosystems: Vec<String>,
    /// The calls that release the lock, as the library spells them.
    #[serde(default)]
    releases: Vec<String>,
    /// Where its token comes from, when the kind hands one out.
    #[serde(default)]
    token_from: Option<String>,
}

/// One entry of the catalogue: a rule, as `audit --list` shows it.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The rule's id.
    pub id: String,
    /// The kind it finds (its SARIF rule id).
    pub kind: Kind,
    /// The library, as its users know it.
    pub library: Option<String>,
    /// The ecosystems whose code it is in.
    pub ecosystems: Vec<String>,
    /// The calls that take the lock (lowercased), or the annotation.
    pub takes: Vec<String>,
    /// The calls that release it, as the library spells them.
    pub releases: Vec<String>,
    /// Where its token comes from, if the kind hands one out.
    pub token_from: Option<String>,
}

/// A rule file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDef {
    #[serde(default)]
    libraries: Libraries,
    #[serde(default)]
    kinds: Vec<KindDef>,
    #[serde(default)]
    rules: Vec<RuleDef>,
}

/// A rule, its kind resolved.
#[derive(Debug)]
pub(crate) struct Rule {
    kind: Kind,
    def: RuleDef,
}

/// The rules an audit matches with: libraries, kinds and call rules, the
/// user's before the bundled ones.
#[derive(Debug)]
pub struct Rules {
    libraries: Vec<(String, Vec<String>)>,
    kinds: Vec<Kind>,
    rules: Vec<Rule>,
}

/// The bundled kinds, in [`Kind::ALL`] order.
pub(crate) fn bundled_kinds() -> &'static [KindDef] {
    &bundled_table().0
}

/// Libraries by name: the words that show a file uses one.
type Libraries = BTreeMap<String, Vec<String>>;

/// The bundled kinds (in [`Kind::ALL`] order) and libraries.
fn bundled_table() -> &'static (Vec<KindDef>, Libraries) {
    static TABLE: OnceLock<(Vec<KindDef>, Libraries)> = OnceLock::new();
    TABLE.get_or_init(|| {
        // The bundled file is ours: a bad one is a bug, found by any test.
        let mut file = parse("kinds.yaml", KINDS_YAML).unwrap_or_else(|e| panic!("{e}"));
        let mut ordered = Vec::new();
        for kind in Kind::ALL {
            let at = file
                .kinds
                .iter()
                .position(|k| k.id == kind.name())
                .unwrap_or_else(|| panic!("kinds.yaml has no kind `{}`", kind.name()));
            let def = file.kinds.remove(at);
            check_kind(&def).unwrap_or_else(|e| panic!("kinds.yaml: {e}"));
            ordered.push(def);
        }
        assert!(
            file.kinds.is_empty() && file.rules.is_empty(),
            "kinds.yaml has kinds the code does not name, or rules"
        );
        (ordered, file.libraries)
    })
}

impl Rules {
    /// The bundled rules.
    pub fn bundled() -> &'static Rules {
        static RULES: OnceLock<Rules> = OnceLock::new();
        RULES.get_or_init(|| Rules::with(&[]).unwrap_or_else(|e| panic!("the bundled rules: {e}")))
    }

    /// The bundled rules and those of `files` (their rules first, in the
    /// order given). An error says `FILE:LINE:COL: what is wrong`.
    pub fn load(files: &[PathBuf]) -> Result<Rules, String> {
        let mut parsed = Vec::new();
        for path in files {
            let shown = path.display().to_string();
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("{shown}: cannot read the rule file: {e}"))?;
            parsed.push((shown, text));
        }
        Rules::with(&parsed)
    }

    /// The bundled rules and those of the given `(name, text)` files.
    fn with(files: &[(String, String)]) -> Result<Rules, String> {
        let (bundled, bundled_libraries) = bundled_table();
        let mut libraries: Vec<(String, Vec<String>)> = bundled_libraries
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    v.iter().map(|w| w.to_ascii_lowercase()).collect(),
                )
            })
            .collect();
        let mut kinds: Vec<Kind> = Kind::ALL.to_vec();
        debug_assert_eq!(bundled.len(), kinds.len());
        let mut user_rules = Vec::new();
        for (name, text) in files {
            let file = parse(name, text)?;
            let at = |id: &str, key: &str| locate(name, text, id, key);
            for (lib, words) in file.libraries {
                if libraries.iter().any(|(l, _)| *l == lib) {
                    return Err(format!(
                        "{}: library `{lib}` is already defined",
                        locate(name, text, &lib, "")
                    ));
                }
                if words.is_empty() {
                    return Err(format!(
                        "{}: library `{lib}` lists no word",
                        locate(name, text, &lib, "")
                    ));
                }
                libraries.push((lib, words.iter().map(|w| w.to_ascii_lowercase()).collect()));
            }
            for def in file.kinds {
                check_kind(&def).map_err(|e| format!("{}: {e}", at(&def.id, "id")))?;
                if kinds.iter().any(|k| k.name() == def.id) {
                    return Err(format!(
                        "{}: kind `{}` is already defined",
                        at(&def.id, "id"),
                        def.id
                    ));
                }
                kinds.push(Kind::Custom(super::CustomKind(Box::leak(Box::new(def)))));
            }
            for def in file.rules {
                user_rules.push(resolve(def, &kinds, &libraries, &at)?);
            }
        }
        // The bundled rules come after the user's: the first rule that
        // matches a call wins.
        let locks = parse("locks.yaml", LOCKS_YAML)?;
        let at = |id: &str, key: &str| locate("locks.yaml", LOCKS_YAML, id, key);
        let mut rules = user_rules;
        for def in locks.rules {
            rules.push(resolve(def, &kinds, &libraries, &at)?);
        }
        Ok(Rules {
            libraries,
            kinds,
            rules,
        })
    }

    /// Every kind these rules can report: the bundled ones in
    /// [`Kind::ALL`] order, then the user's.
    pub fn kinds(&self) -> &[Kind] {
        &self.kinds
    }

    pub(crate) fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The catalogue: every rule, the user's first, as `audit --list`
    /// shows it.
    pub fn catalogue(&self) -> Vec<Entry> {
        self.rules.iter().map(Rule::entry).collect()
    }

    /// The libraries a file can use, and the words that show it.
    pub fn libraries(&self) -> &[(String, Vec<String>)] {
        &self.libraries
    }

    /// What `fencesim audit --list` prints: each kind (its id is its SARIF
    /// rule id) with its token or why it has none, its scenario (as under
    /// `scenarios`) and what it matches, then the rules that find it, each
    /// with its library, ecosystems, the calls that take and release the
    /// lock and where its token comes from; then the libraries' words.
    pub fn listing(&self, scenarios: &Path) -> String {
        let mut out = String::new();
        let entries = self.catalogue();
        for &kind in &self.kinds {
            let token = match (kind.token(), kind.no_token()) {
                (Some(t), _) => format!("token: {t}"),
                (None, Some(why)) => format!("no token: {why}"),
                (None, None) => "token: unknown".to_owned(),
            };
            out.push_str(&format!(
                "{} ({}): {token}; see scenarios/{}\n  matches: {}\n",
                kind.name(),
                kind.label(),
                kind.scenario(scenarios),
                kind.description()
            ));
            for e in entries.iter().filter(|e| e.kind == kind) {
                let mut line = format!("  rule {}", e.id);
                if !e.ecosystems.is_empty() {
                    line.push_str(&format!(" [{}]", e.ecosystems.join(", ")));
                }
                if let Some(library) = &e.library {
                    line.push_str(&format!(" {library}"));
                }
                line.push_str(&format!(": takes {}", e.takes.join(", ")));
                if !e.releases.is_empty() {
                    line.push_str(&format!("; releases {}", e.releases.join(", ")));
                }
                if let Some(from) = &e.token_from {
                    line.push_str(&format!("; token from {from}"));
                }
                out.push_str(&line);
                out.push('\n');
            }
        }
        out.push_str("libraries (a file uses one when its code or a path it imports holds one of its words):\n");
        for (name, words) in &self.libraries {
            out.push_str(&format!("  {name}: {}\n", words.join(", ")));
        }
        out.push_str(&format!(
            "catalogue: {} kinds, {} rules, {} libraries\n",
            self.kinds.len(),
            entries.len(),
            self.libraries.len()
        ));
        out
    }

    /// Which libraries a file uses, from its lowercased code.
    pub(crate) fn uses(&self, code_lower: &str) -> Vec<(&str, bool)> {
        self.libraries
            .iter()
            .map(|(name, words)| {
                let used = words.iter().any(|w| code_lower.contains(w.as_str()));
                (name.as_str(), used)
            })
            .collect()
    }
}

/// A kind hands out a token or says why not, and names a scenario.
fn check_kind(def: &KindDef) -> Result<(), String> {
    if !is_id(&def.id) {
        return Err(format!(
            "kind id `{}`: use lowercase letters, digits and `_`",
            def.id
        ));
    }
    match (&def.token, &def.no_token) {
        (Some(_), Some(_)) => {
            return Err(format!(
                "kind `{}` has both `token` and `no_token`: a lock hands out a token or it does not",
                def.id
            ))
        }
        (None, None) => {
            return Err(format!(
                "kind `{}` needs `token` (the token its API hands out) or `no_token` (why it cannot fence)",
                def.id
            ))
        }
        _ => {}
    }
    if def.scenarios.is_empty() {
        return Err(format!("kind `{}` names no scenario", def.id));
    }
    if let Some(bad) = def
        .scenarios
        .iter()
        .find(|s| !s.ends_with(".toml") || s.contains(['/', '\\']))
    {
        return Err(format!(
            "kind `{}`: scenario `{bad}` is not the name of a scenario file under scenarios/",
            def.id
        ));
    }
    Ok(())
}

fn is_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// A rule checked against the kinds and libraries known, its names
/// lowercased.
fn resolve(
    mut def: RuleDef,
    kinds: &[Kind],
    libraries: &[(String, Vec<String>)],
    at: &dyn Fn(&str, &str) -> String,
) -> Result<Rule, String> {
    let Some(&kind) = kinds.iter().find(|k| k.name() == def.kind) else {
        let known: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
        return Err(format!(
            "{}: rule `{}`: unknown kind `{}` (known: {})",
            at(&def.id, "kind"),
            def.id,
            def.kind,
            known.join(", ")
        ));
    };
    if def.calls.is_empty() == def.annotation.is_none() {
        return Err(format!(
            "{}: rule `{}` needs either `calls` or `annotation`",
            at(&def.id, "id"),
            def.id
        ));
    }
    if let Some(r) = &def.receiver {
        if !r.any
            && r.is.is_empty()
            && r.contains.is_empty()
            && r.assigned_from.is_empty()
            && r.typed.is_empty()
        {
            return Err(format!(
                "{}: rule `{}`: `receiver` needs `any`, `is`, `contains`, `assigned_from` or `typed`",
                at(&def.id, "receiver"),
                def.id
            ));
        }
    }
    for (key, list) in [("uses", &def.uses), ("uses_none", &def.uses_none)] {
        if let Some(bad) = list
            .iter()
            .find(|l| !libraries.iter().any(|(n, _)| n == *l))
        {
            let known: Vec<&str> = libraries.iter().map(|(n, _)| n.as_str()).collect();
            return Err(format!(
                "{}: rule `{}`: unknown library `{bad}` (known: {})",
                at(&def.id, key),
                def.id,
                known.join(", ")
            ));
        }
    }
    const LANGUAGES: [&str; 8] = [
        "rust",
        "go",
        "java",
        "kotlin",
        "python",
        "typescript",
        "javascript",
        "sql",
    ];
    if let Some(bad) = def
        .languages
        .iter()
        .find(|l| !LANGUAGES.contains(&l.to_ascii_lowercase().as_str()))
    {
        return Err(format!(
            "{}: rule `{}`: unknown language `{bad}` (known: {})",
            at(&def.id, "languages"),
            def.id,
            LANGUAGES.join(", ")
        ));
    }
    if def.in_queries && def.calls.is_empty() {
        return Err(format!(
            "{}: rule `{}`: `in_queries` needs `calls`",
            at(&def.id, "in_queries"),
            def.id
        ));
    }
    lower_all(&mut def.calls);
    lower_all(&mut def.unless_file_calls);
    lower_all(&mut def.args_contain);
    lower_all(&mut def.transaction_calls);
    lower_all(&mut def.session_when);
    for w in &mut def.session_when {
        w.retain(|c| !c.is_whitespace());
    }
    if let Some(bad) = def
        .transaction_calls
        .iter()
        .find(|c| !def.calls.contains(c))
    {
        return Err(format!(
            "{}: rule `{}`: transaction call `{bad}` is not one of its `calls`",
            at(&def.id, "transaction_calls"),
            def.id
        ));
    }
    lower_all(&mut def.languages);
    lower_all(&mut def.ecosystems);
    for a in &mut def.args_contain {
        a.retain(|c| !c.is_whitespace());
    }
    if let Some(a) = &mut def.annotation {
        *a = format!("@{}", a.trim_start_matches('@').to_ascii_lowercase());
    }
    if let Some(k) = &mut def.keyword {
        *k = k.to_ascii_lowercase();
    }
    if let Some(r) = &mut def.receiver {
        lower_all(&mut r.is);
        lower_all(&mut r.contains);
        lower_all(&mut r.or_named);
        lower_all(&mut r.typed);
        for s in &mut r.assigned_from {
            lower_all(&mut s.calls);
            if let Some(n) = &mut s.receiver {
                n.lowercase();
            }
        }
    }
    Ok(Rule { kind, def })
}

fn lower_all(names: &mut [String]) {
    for n in names {
        *n = n.to_ascii_lowercase();
    }
}

fn parse(name: &str, text: &str) -> Result<FileDef, String> {
    serde_norway::from_str(text).map_err(|e| {
        let message = e.to_string();
        match e.location() {
            Some(l) => {
                // The place leads the line; it need not be said twice.
                let place = format!(" at line {} column {}", l.line(), l.column());
                let message = message.replacen(&place, "", 1);
                format!("{name}:{}:{}: {message}", l.line(), l.column())
            }
            None => format!("{name}: {message}"),
        }
    })
}

/// `FILE:LINE:COL` of `key:` in the list item whose `id` is `id` (or of
/// the mapping key `id` itself when `key` is empty, for a library): where
/// a check made after parsing points.
fn locate(name: &str, text: &str, id: &str, key: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let is_key = key_value;
    let item = lines.iter().position(|l| match is_key(l, "id") {
        Some((v, _)) => v == id,
        None => key.is_empty() && is_key(l, id).is_some(),
    });
    let Some(start) = item else {
        return format!("{name}:1:1");
    };
    if key.is_empty() {
        let col = is_key(lines[start], id).map_or(1, |(_, c)| c);
        return format!("{name}:{}:{col}", start + 1);
    }
    for (i, line) in lines.iter().enumerate().skip(start) {
        if i > start && line.trim_start().starts_with("- id") {
            break;
        }
        if let Some((_, col)) = is_key(line, key) {
            return format!("{name}:{}:{col}", i + 1);
        }
    }
    let col = is_key(lines[start], "id").map_or(1, |(_, c)| c);
    format!("{name}:{}:{col}", start + 1)
}

/// The value of `key:` on `line` (a list item's `- key:` too) and the
/// 1-based column of the key.
fn key_value<'a>(line: &'a str, key: &str) -> Option<(&'a str, usize)> {
    let t = line.trim_start().trim_start_matches("- ").trim_start();
    t.strip_prefix(key)
        .and_then(|r| r.trim_start().strip_prefix(':'))
        .map(|v| (v.trim().trim_matches(['"', '\'']), line.len() - t.len() + 1))
}

/// What a file gives a rule to test: the libraries it uses, its calls,
/// its language.
pub(crate) struct FileFacts<'a> {
    pub uses: Vec<(&'a str, bool)>,
    pub call_names: Vec<&'a str>,
    pub language: &'a str,
    /// The types a name is declared with in the file, lowercased paths.
    pub types_of: &'a dyn Fn(&str) -> Vec<String>,
}

/// What a call gives a rule to test beyond its name and receiver.
pub(crate) struct CallFacts<'a> {
    /// Its first argument.
    pub first_arg: FirstArgSeen<'a>,
    /// Whether it asks for NX.
    pub nx: &'a dyn Fn() -> bool,
    /// Whether it is given a Python keyword argument.
    pub keyword: &'a dyn Fn(&str) -> bool,
    /// Its arguments, lowercased, spaces removed.
    pub args: &'a dyn Fn() -> String,
}

impl Rule {
    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }

    pub(crate) fn id(&self) -> &str {
        &self.def.id
    }

    /// Whether the lock `call` takes in `statement` (lowercased) is held by
    /// the database for the transaction that took it.
    pub(crate) fn in_transaction(&self, call: &str, statement: &str) -> bool {
        let squeezed: String = statement.split_whitespace().collect();
        self.def.transaction_calls.iter().any(|c| c == call)
            && !self
                .def
                .session_when
                .iter()
                .any(|w| squeezed.contains(w.as_str()))
    }

    /// The calls it also looks for in query strings, if any.
    pub(crate) fn query_calls(&self) -> &[String] {
        if self.def.in_queries {
            &self.def.calls
        } else {
            &[]
        }
    }

    /// The catalogue entry it is.
    pub(crate) fn entry(&self) -> Entry {
        let d = &self.def;
        Entry {
            id: d.id.clone(),
            kind: self.kind,
            library: d.library.clone(),
            ecosystems: d.ecosystems.clone(),
            takes: match &d.annotation {
                Some(a) => vec![a.clone()],
                None => d.calls.clone(),
            },
            releases: d.releases.clone(),
            token_from: d.token_from.clone(),
        }
    }

    pub(crate) fn annotation(&self) -> Option<&str> {
        self.def.annotation.as_deref()
    }

    /// The names bound by this rule's `assigned_from` calls in a file.
    pub(crate) fn bound_names(
        &self,
        calls: &[super::detect::Call],
        assigned: &dyn Fn(&super::detect::Call) -> Option<String>,
    ) -> Vec<String> {
        let Some(r) = &self.def.receiver else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for c in calls {
            let bound = r.assigned_from.iter().any(|s| {
                s.calls.contains(&c.name)
                    && s.receiver
                        .as_ref()
                        .map_or(true, |n| n.matches(c.receiver.as_deref()))
            });
            if !bound {
                continue;
            }
            out.extend(assigned(c));
            out.extend(r.or_named.iter().cloned());
        }
        out.sort();
        out.dedup();
        out
    }

    /// Whether `call` is this rule's: `bound` are [`Rule::bound_names`],
    /// `first_arg` the call's first argument, `nx`
    /// and `keyword` tests of its arguments.
    pub(crate) fn matches(
        &self,
        call: &super::detect::Call,
        facts: &FileFacts,
        bound: &[String],
        seen: &CallFacts,
    ) -> bool {
        let d = &self.def;
        if !d.calls.contains(&call.name) {
            return false;
        }
        if !d.languages.is_empty() && !d.languages.iter().any(|l| l == facts.language) {
            return false;
        }
        if let Some(r) = &d.receiver {
            let recv = call.receiver.as_deref();
            let named = Names::matches_parts(r.any, &r.is, &r.contains, recv);
            let assigned = recv.is_some_and(|n| bound.iter().any(|b| b == n));
            let typed = !r.typed.is_empty()
                && recv.is_some_and(|n| {
                    (facts.types_of)(n)
                        .iter()
                        .any(|t| r.typed.iter().any(|w| type_is(t, w)))
                });
            if !(named || assigned || typed) {
                return false;
            }
        }
        let uses = |lib: &String| facts.uses.iter().any(|(n, u)| n == lib && *u);
        if !d.uses.iter().all(uses) || d.uses_none.iter().any(uses) {
            return false;
        }
        let first_arg = seen.first_arg;
        let literal = first_arg.literal;
        let arg_ok = match d.first_arg {
            None => true,
            Some(FirstArg::String) => literal.is_some(),
            Some(FirstArg::Path) => literal.is_some_and(|l| l.starts_with('/')),
            Some(FirstArg::Name) => literal.is_some_and(|l| !l.starts_with('/')),
            Some(FirstArg::Any) => first_arg.given,
        };
        if !arg_ok {
            return false;
        }
        if d.unless_file_calls
            .iter()
            .any(|n| facts.call_names.contains(&n.as_str()))
        {
            return false;
        }
        if d.nx && !(seen.nx)() {
            return false;
        }
        if !d.args_contain.is_empty() {
            let args = (seen.args)();
            if !d.args_contain.iter().any(|a| args.contains(a.as_str())) {
                return false;
            }
        }
        d.keyword.as_deref().map_or(true, seen.keyword)
    }
}

/// Whether the type path `path` (lowercased: `redsync.redsync`,
/// `org.redisson.api.rlock`, `rlock`) is `word`, or ends with it after a
/// `.` or `::`.
fn type_is(path: &str, word: &str) -> bool {
    path == word
        || path
            .strip_suffix(word)
            .is_some_and(|head| head.ends_with('.') || head.ends_with("::"))
}

/// The scenario a kind names, as [`Kind::scenario`] documents.
pub(crate) fn scenario<'a>(def: &'a KindDef, scenarios: &Path) -> &'a str {
    def.scenarios
        .iter()
        .find(|s| scenarios.join(s).is_file())
        .or(def.scenarios.last())
        .map(String::as_str)
        .expect("a kind names a scenario")
}
