//! A source file's syntax tree, from its language's tree-sitter grammar:
//! the comments, string literals, functions and calls the audit reads,
//! each found as a node of the tree rather than a pattern in the text.
//!
//! SQL has no grammar here. The maintained SQL grammar
//! (`tree-sitter-sequel`) builds, but reads a dollar-quoted function body
//! (`$$ … $$`) only when it holds plain SQL statements: PL/pgSQL, where
//! functions take their advisory locks (`PERFORM pg_advisory_lock(…)`,
//! `IF`, loops), and psql's variables (`:'merchant'`) are parse errors. A
//! `.sql` file's scope is also a transaction or that body, not a function.
//! [`super::source`]'s lexer reads SQL by its comments and quotes.
//!
//! A file that does not parse cleanly still gives a tree: the parts the
//! grammar could not place are `ERROR` nodes, whose comments, strings and
//! calls are read like any other, and whose functions are not scopes.

use std::collections::HashMap;

use tree_sitter::{Node, Parser};

use super::Language;

/// A string literal: byte offsets of its opening and closing quotes (the
/// closing quote's offset is the end for an unterminated one) and its
/// contents as written (escapes not decoded).
#[derive(Clone, Debug)]
pub(crate) struct Literal {
    pub start: usize,
    /// Byte offset of the first byte of its contents (after a prefix and
    /// one to three quotes).
    pub body: usize,
    pub end: usize,
    pub text: String,
    /// The name it is assigned to (`UPDATE_SQL = "UPDATE …"`), lowercased.
    pub bound: Option<String>,
}

/// A function, method, closure or lambda: the scope a lock is judged in.
#[derive(Clone, Debug)]
pub(crate) struct Function {
    /// Its byte range, decorators and annotations included.
    pub start: usize,
    pub end: usize,
    /// Its name, lowercased, when it is declared with one (`def f`,
    /// `const f = () => …`).
    pub name: Option<String>,
    /// The byte range of its body.
    pub body: (usize, usize),
}

/// A call in the code: `receiver.name(args)`, a constructor (`new T(…)`)
/// or a Go composite literal (`T{…}`).
#[derive(Clone, Debug)]
pub(crate) struct Call {
    /// The callee's name, lowercased.
    pub name: String,
    /// Byte offset of the name.
    pub at: usize,
    /// The name the callee is reached through, lowercased: the object
    /// expression's last name (`self.lock.acquire()`: `lock`), or a
    /// chained call's name (`a.b().c()`: `b`).
    pub receiver: Option<String>,
    /// The callee as written, without spaces: `store.save`, `r.mu.Lock`.
    pub callee: String,
    /// Offsets of the opening and closing parenthesis (or brace, for a Go
    /// composite literal or a Kotlin lambda given without parentheses);
    /// the end of the text for an unclosed one.
    pub open: usize,
    pub close: usize,
    /// The byte range of the functions among its arguments (closures,
    /// lambdas, callbacks, anonymous classes, wherever they are nested in
    /// the arguments), if any.
    pub functions: Option<(usize, usize)>,
    /// The name its value is held in, lowercased, and whether that is a
    /// field: `this.x = …`, `self.x = …`, a field declaration, a struct or
    /// object literal's field. A chained call's value is the chain's.
    pub held_in: Option<(String, bool)>,
    /// Whether the call is a statement of its own (its value, if any, is
    /// dropped): done for what it does.
    pub statement: bool,
    /// Whether it is reached through a field (`this.store.save()`,
    /// `p.feeds.Refresh()`): a method of whatever the field holds.
    pub via_field: bool,
}

/// A Python `with` on a name (`with lock:`, `with self.lock as l:`): where
/// a lock held in that name is taken.
#[derive(Clone, Debug)]
pub(crate) struct With {
    /// Byte offset of `with`.
    pub at: usize,
    /// Byte offset of its `:`: the protected work is after it.
    pub end: usize,
    /// The name, lowercased (`lock`).
    pub name: String,
    /// As written: `with self.lock`.
    pub what: String,
}

/// What the audit reads from a parsed file.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    /// Byte ranges of the comments, in order.
    pub comments: Vec<(usize, usize)>,
    /// Every string literal, in order.
    pub strings: Vec<Literal>,
    /// Every function, in the order they start.
    pub functions: Vec<Function>,
    /// Every call, in the order of their names.
    pub calls: Vec<Call>,
    /// Every Python `with` on a name, in order.
    pub withs: Vec<With>,
    /// Every Rust macro invocation: its name (the last segment,
    /// lowercased: `info` for `tracing::info!`) and its byte range.
    pub macros: Vec<(String, usize, usize)>,
}

/// The grammars of `language`, the first preferred (TypeScript's, then
/// TSX's for a file the first does not parse); none for SQL.
fn grammars(language: Language) -> Vec<tree_sitter::Language> {
    match language {
        Language::Rust => vec![tree_sitter_rust::LANGUAGE.into()],
        Language::Go => vec![tree_sitter_go::LANGUAGE.into()],
        Language::Java => vec![tree_sitter_java::LANGUAGE.into()],
        Language::Kotlin => vec![tree_sitter_kotlin_ng::LANGUAGE.into()],
        Language::Python => vec![tree_sitter_python::LANGUAGE.into()],
        Language::TypeScript => vec![
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            tree_sitter_typescript::LANGUAGE_TSX.into(),
        ],
        Language::JavaScript => vec![tree_sitter_javascript::LANGUAGE.into()],
        Language::Sql => Vec::new(),
    }
}

/// Parses `text` as `language`: `None` for a language without a grammar.
pub(crate) fn parse(language: Language, text: &str) -> Option<Parsed> {
    let grammars = grammars(language);
    if grammars.is_empty() {
        return None;
    }
    let mut best: Option<tree_sitter::Tree> = None;
    let mut parser = Parser::new();
    for grammar in grammars {
        if parser.set_language(&grammar).is_err() {
            continue;
        }
        let Some(tree) = parser.parse(text, None) else {
            continue;
        };
        let clean = !tree.root_node().has_error();
        if best.is_none() || clean {
            best = Some(tree);
        }
        if clean {
            break;
        }
    }
    let mut out = Parsed::default();
    if let Some(tree) = best {
        let root = tree.root_node();
        let reader = Reader {
            language,
            text,
            parents: parents(root),
        };
        reader.read(root, &mut out);
    }
    out.functions
        .sort_by_key(|f| (f.start, std::cmp::Reverse(f.end)));
    out.calls.sort_by_key(|c| c.at);
    out.calls.dedup_by_key(|c| c.at);
    Some(out)
}

/// Each node's parent, by node id: tree-sitter finds a parent by walking
/// down from the root, which deep nesting makes quadratic.
fn parents(root: Node) -> HashMap<usize, Node> {
    let mut out = HashMap::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            out.insert(child.id(), node);
            stack.push(child);
        }
    }
    out
}

/// The grammars' member accesses, each with the field that holds the name
/// and the one that holds what it is reached through: Rust's `a.b` and
/// `a::b`, Go's `a.b` and `pkg.T`, JavaScript's and TypeScript's `a.b`,
/// Python's `a.b`.
const MEMBER_FIELDS: [(&str, &str, &str); 6] = [
    ("field_expression", "field", "value"),
    ("selector_expression", "field", "operand"),
    ("member_expression", "property", "object"),
    ("attribute", "attribute", "object"),
    ("scoped_identifier", "name", "path"),
    ("qualified_type", "name", "package"),
];

struct Reader<'t> {
    language: Language,
    text: &'t str,
    parents: HashMap<usize, Node<'t>>,
}

impl<'t> Reader<'t> {
    fn parent(&self, node: Node) -> Option<Node<'t>> {
        self.parents.get(&node.id()).copied()
    }

    fn read(&self, root: Node, out: &mut Parsed) {
        let mut cursor = root.walk();
        loop {
            let node = cursor.node();
            let descend = self.visit(node, out);
            if descend && cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
            }
        }
    }

    /// Records `node`; whether its children are to be read.
    fn visit(&self, node: Node, out: &mut Parsed) -> bool {
        // Keywords and punctuation: `function`, `lambda`, TypeScript's
        // `string` type are tokens, not the nodes of those names.
        if !node.is_named() {
            return false;
        }
        let kind = node.kind();
        if kind.ends_with("comment") {
            out.comments.push((node.start_byte(), node.end_byte()));
            return false;
        }
        if self.is_string(kind) {
            out.strings.push(self.literal(node));
            return false;
        }
        if let Some(f) = self.function(node) {
            out.functions.push(f);
        }
        if kind == "macro_invocation" {
            if let Some(m) = node.child_by_field_name("macro") {
                let name = self.text(m).rsplit("::").next().unwrap_or("");
                out.macros.push((
                    name.trim().to_ascii_lowercase(),
                    node.start_byte(),
                    node.end_byte(),
                ));
            }
        }
        if self.language == Language::Rust && kind == "token_tree" {
            self.macro_calls(node, out);
        }
        if let Some(c) = self.call(node) {
            out.calls.push(c);
        }
        if kind == "with_statement" {
            out.withs.extend(self.with_names(node));
        }
        true
    }

    /// The names a `with` statement enters: `with lock:`, `with self.lock
    /// as held:` (not a call: `with r.lock("k"):` makes its lock there).
    fn with_names(&self, node: Node) -> Vec<With> {
        let (Some(keyword), Some(clause), Some(colon)) = (
            child_of_kind(node, "with"),
            child_of_kind(node, "with_clause"),
            child_of_kind(node, ":"),
        ) else {
            return Vec::new();
        };
        let mut cursor = clause.walk();
        let items: Vec<Node> = clause.named_children(&mut cursor).collect();
        items
            .into_iter()
            .filter_map(|item| {
                let mut value = item.child_by_field_name("value")?;
                if value.kind() == "as_pattern" {
                    value = value.named_child(0)?;
                }
                let name = match value.kind() {
                    "identifier" => value,
                    "attribute"
                        if value
                            .child_by_field_name("object")
                            .is_some_and(|o| self.text(o) == "self") =>
                    {
                        value.child_by_field_name("attribute")?
                    }
                    _ => return None,
                };
                Some(With {
                    at: keyword.start_byte(),
                    end: colon.start_byte(),
                    name: self.text(name).to_ascii_lowercase(),
                    what: self
                        .text
                        .get(keyword.start_byte()..clause.end_byte())
                        .unwrap_or("")
                        .to_owned(),
                })
            })
            .collect()
    }

    fn has_error_ancestor(&self, node: Node) -> bool {
        let mut n = node;
        while let Some(p) = self.parent(n) {
            if p.is_error() {
                return true;
            }
            n = p;
        }
        false
    }

    /// Whether a call's value is dropped: it is an expression statement
    /// (under `await`, `?`, `defer`, `go`), or a Kotlin block's statement.
    fn is_statement(&self, call: Node) -> bool {
        let mut n = call;
        while let Some(p) = self.parent(n) {
            match p.kind() {
                "expression_statement" | "defer_statement" | "go_statement" => return true,
                "await_expression" | "try_expression" | "parenthesized_expression" => n = p,
                "block" | "statements" | "lambda_literal" | "source_file"
                    if self.language == Language::Kotlin =>
                {
                    return true
                }
                _ => return false,
            }
        }
        false
    }

    fn is_string(&self, kind: &str) -> bool {
        match self.language {
            Language::Rust => matches!(
                kind,
                "string_literal" | "raw_string_literal" | "char_literal"
            ),
            Language::Go => matches!(
                kind,
                "interpreted_string_literal" | "raw_string_literal" | "rune_literal"
            ),
            Language::Java => matches!(kind, "string_literal" | "character_literal"),
            Language::Kotlin => matches!(
                kind,
                "string_literal" | "multiline_string_literal" | "character_literal"
            ),
            Language::Python => kind == "string",
            Language::TypeScript | Language::JavaScript => {
                matches!(kind, "string" | "template_string")
            }
            Language::Sql => false,
        }
    }

    fn text(&self, node: Node) -> &'t str {
        self.text.get(node.byte_range()).unwrap_or("")
    }

    /// A string node: its quotes found in its text (a prefix such as `r#`,
    /// `b`, `f`; one or three quotes), its contents between them.
    fn literal(&self, node: Node) -> Literal {
        let (start, end) = (node.start_byte(), node.end_byte());
        let written = self.text(node).as_bytes();
        let prefix = written
            .iter()
            .take_while(|b| b.is_ascii_alphabetic() || **b == b'#' || **b == b'@')
            .count();
        let quote = written.get(prefix).copied().unwrap_or(b'"');
        let quotes = if written.len() >= prefix + 6 && written[prefix..prefix + 3] == [quote; 3] {
            3
        } else {
            1
        };
        let open = (prefix + quotes).min(written.len());
        let hashes = written[..prefix].iter().filter(|&&b| b == b'#').count();
        let closing = quotes + hashes;
        let closed = written.len() >= open + closing
            && written[written.len() - closing..written.len() - hashes]
                .iter()
                .all(|&b| b == quote);
        let body_end = if closed { end - closing } else { end };
        let body = (start + open).min(body_end);
        Literal {
            start,
            body,
            end: body_end,
            text: self.text.get(body..body_end).unwrap_or("").to_owned(),
            bound: self.held_in(node, true).map(|(name, _)| name),
        }
    }

    /// `node` as a scope, if it is a function, method, closure or lambda.
    fn function(&self, node: Node) -> Option<Function> {
        let kind = node.kind();
        let named = matches!(
            kind,
            "function_item"
                | "function_declaration"
                | "method_declaration"
                | "constructor_declaration"
                | "function_definition"
                | "method_definition"
                | "generator_function_declaration"
                | "secondary_constructor"
        );
        let anonymous = matches!(
            kind,
            "closure_expression"
                | "async_block"
                | "func_literal"
                | "lambda_expression"
                | "lambda_literal"
                | "anonymous_function"
                | "lambda"
                | "arrow_function"
                | "function_expression"
                | "function"
                | "generator_function"
        );
        if !(named || anonymous) || self.has_error_ancestor(node) {
            return None;
        }
        let body = node
            .child_by_field_name("body")
            .or_else(|| child_of_kind(node, "function_body"))
            .unwrap_or(node);
        let name = if named {
            node.child_by_field_name("name")
                .map(|n| self.text(n).to_ascii_lowercase())
        } else {
            // `const f = () => …`, `run = async () => …`, `f = lambda: …`.
            self.held_in(node, false).map(|(name, _)| name)
        };
        // A decorated Python function starts at its decorators.
        let start = match self.parent(node) {
            Some(p) if p.kind() == "decorated_definition" => p.start_byte(),
            _ => node.start_byte(),
        };
        Some(Function {
            start,
            end: node.end_byte(),
            name,
            body: (body.start_byte(), body.end_byte()),
        })
    }

    /// `node` as a call, if it is one whose callee has a name.
    fn call(&self, node: Node) -> Option<Call> {
        let kind = node.kind();
        let (name, receiver, args) = match (self.language, kind) {
            (Language::Java, "method_invocation") => (
                node.child_by_field_name("name")?,
                node.child_by_field_name("object"),
                node.child_by_field_name("arguments")?,
            ),
            (Language::Java, "object_creation_expression")
            | (Language::JavaScript | Language::TypeScript, "new_expression") => {
                let ty = node
                    .child_by_field_name("type")
                    .or_else(|| node.child_by_field_name("constructor"))?;
                let (name, receiver) = self.split_name(ty)?;
                (name, receiver, node.child_by_field_name("arguments")?)
            }
            (Language::Go, "composite_literal") => {
                let (name, receiver) = self.split_name(node.child_by_field_name("type")?)?;
                (name, receiver, node.child_by_field_name("body")?)
            }
            (Language::Kotlin, "call_expression") => {
                let callee = node.named_child(0)?;
                if callee.kind() == "call_expression" {
                    // `launch(ctx) { … }`: the lambda is the inner call's.
                    return None;
                }
                let (name, receiver) = self.split_name(callee)?;
                let args = child_of_kind(node, "value_arguments")
                    .or_else(|| child_of_kind(node, "annotated_lambda"))?;
                (name, receiver, args)
            }
            (_, "call_expression" | "call") => {
                let (name, receiver) = self.split_name(node.child_by_field_name("function")?)?;
                (name, receiver, node.child_by_field_name("arguments")?)
            }
            _ => return None,
        };
        let open = args.start_byte();
        let last = args.end_byte().saturating_sub(1);
        let closes = matches!(self.text.as_bytes().get(last), Some(b')' | b'}'));
        let close = if closes { last } else { self.text.len() };
        // The functions among the arguments, a Kotlin trailing lambda's
        // included (`mutex.withLock { … }`, `launch(ctx) { … }`).
        let mut functions = Vec::new();
        let mut lambdas = vec![args];
        let mut outer = node;
        if self.language == Language::Kotlin {
            if let Some(l) = child_of_kind(node, "annotated_lambda") {
                lambdas.push(l);
            }
            if let Some(p) = self.parent(node).filter(|p| p.kind() == "call_expression") {
                if p.named_child(0) == Some(node) {
                    lambdas.extend(child_of_kind(p, "annotated_lambda"));
                    outer = p;
                }
            }
        }
        for a in lambdas {
            function_nodes(a, &mut functions);
        }
        let functions = match (functions.first(), functions.last()) {
            (Some(a), Some(b)) => Some((a.start_byte(), b.end_byte())),
            _ => None,
        };
        let callee_start = receiver.map_or(name.start_byte(), |r| r.start_byte());
        let callee: String = self
            .text
            .get(callee_start..name.end_byte())
            .unwrap_or("")
            .split_whitespace()
            .collect();
        Some(Call {
            name: self.text(name).to_ascii_lowercase(),
            at: name.start_byte(),
            receiver: receiver.and_then(|r| self.head_name(r)),
            callee,
            open,
            close,
            functions,
            held_in: self.held_in(outer, false),
            statement: self.is_statement(outer),
            via_field: receiver.is_some_and(|r| {
                matches!(
                    r.kind(),
                    "field_expression"
                        | "selector_expression"
                        | "member_expression"
                        | "attribute"
                        | "navigation_expression"
                        | "field_access"
                )
            }),
        })
    }

    /// A callee split into its name and the expression it is reached
    /// through: `a.b` is `b` on `a`, `T` is `T` on nothing.
    fn split_name<'n>(&self, callee: Node<'n>) -> Option<(Node<'n>, Option<Node<'n>>)> {
        if let Some(&(_, name, receiver)) = MEMBER_FIELDS.iter().find(|m| m.0 == callee.kind()) {
            return Some((
                callee.child_by_field_name(name)?,
                callee.child_by_field_name(receiver),
            ));
        }
        match callee.kind() {
            "identifier"
            | "type_identifier"
            | "field_identifier"
            | "property_identifier"
            | "simple_identifier" => Some((callee, None)),
            "navigation_expression" | "scoped_type_identifier" => {
                let n = callee.named_child_count();
                let name = callee.named_child(u32::try_from(n.checked_sub(1)?).ok()?)?;
                let receiver = (n > 1).then(|| callee.named_child(0)).flatten();
                (name.kind().ends_with("identifier")).then_some((name, receiver))
            }
            "generic_function" | "generic_type" => {
                let inner = callee
                    .child_by_field_name("function")
                    .or_else(|| callee.child_by_field_name("type"))
                    .or_else(|| callee.named_child(0))?;
                self.split_name(inner)
            }
            _ => None,
        }
    }

    /// The name an object expression is known by: its last name, or a
    /// chained call's name; through `await`, `?`, `!!` and parentheses.
    fn head_name(&self, node: Node) -> Option<String> {
        match node.kind() {
            "identifier"
            | "type_identifier"
            | "field_identifier"
            | "property_identifier"
            | "simple_identifier"
            | "package_identifier"
            | "this"
            | "self"
            | "super" => Some(self.text(node).to_ascii_lowercase()),
            "call_expression"
            | "call"
            | "method_invocation"
            | "object_creation_expression"
            | "new_expression" => match self.call(node) {
                Some(c) => Some(c.name),
                // A Kotlin call with a trailing lambda: the inner call's.
                None => node
                    .named_child(0)
                    .filter(|n| n.kind() == "call_expression")
                    .and_then(|n| self.head_name(n)),
            },
            "field_access" => self.head_name(node.child_by_field_name("field")?),
            "parenthesized_expression"
            | "await_expression"
            | "try_expression"
            | "non_null_expression"
            | "unary_expression"
            | "postfix_expression" => {
                let n = node.named_child_count();
                self.head_name(node.named_child(u32::try_from(n.checked_sub(1)?).ok()?)?)
                    .or_else(|| self.head_name(node.named_child(0)?))
            }
            _ => self
                .split_name(node)
                .and_then(|(name, _)| (name != node).then(|| self.head_name(name)).flatten()),
        }
    }

    /// The name the value of `node` is held in, and whether it is a field:
    /// up through the expression the value is part of (a chain it heads,
    /// `await`, `?`, `&`, parentheses; a string's concatenation when
    /// `string`) to an assignment, a declaration or a literal's field.
    fn held_in(&self, node: Node, string: bool) -> Option<(String, bool)> {
        let mut n = node;
        loop {
            let p = self.parent(n)?;
            let from_right = |field: &str| {
                p.child_by_field_name(field).is_some_and(|r| {
                    r.start_byte() <= n.start_byte() && n.end_byte() <= r.end_byte()
                })
            };
            match p.kind() {
                "await_expression"
                | "parenthesized_expression"
                | "try_expression"
                | "non_null_expression"
                | "unary_expression"
                | "reference_expression"
                | "as_expression"
                | "satisfies_expression"
                | "postfix_expression"
                | "expression_list"
                | "literal_element"
                | "type_assertion_expression" => n = p,
                "binary_expression"
                | "binary_operator"
                | "concatenated_string"
                | "additive_expression"
                    if string =>
                {
                    n = p
                }
                // The head of a chain: `a.b().c()` is held where the chain is.
                "field_expression"
                | "selector_expression"
                | "member_expression"
                | "attribute"
                | "navigation_expression"
                | "field_access"
                | "call_expression"
                | "call"
                | "method_invocation" => n = p,
                "variable_declarator" | "init_declarator" => {
                    let name = self
                        .text(p.child_by_field_name("name")?)
                        .to_ascii_lowercase();
                    let field = self
                        .parent(p)
                        .is_some_and(|g| matches!(g.kind(), "field_declaration"));
                    return is_name(&name).then_some((name, field));
                }
                "public_field_definition" | "field_definition" => {
                    let key = p
                        .child_by_field_name("name")
                        .or_else(|| p.child_by_field_name("property"))?;
                    let name = self.text(key).to_ascii_lowercase();
                    return is_name(&name).then_some((name, true));
                }
                "assignment" | "assignment_expression" | "augmented_assignment_expression" => {
                    if !from_right("right") {
                        return None;
                    }
                    let (name, mut field) = self.target(p.child_by_field_name("left")?)?;
                    // A Python class attribute.
                    field |= self
                        .parent(p)
                        .and_then(|s| self.parent(s))
                        .and_then(|b| self.parent(b))
                        .is_some_and(|c| c.kind() == "class_definition");
                    return Some((name, field));
                }
                "let_declaration" => {
                    let pattern = p.child_by_field_name("pattern")?;
                    let id = first_identifier(pattern)?;
                    return Some((self.text(id).to_ascii_lowercase(), false));
                }
                "short_var_declaration" | "assignment_statement" => {
                    if !from_right("right") {
                        return None;
                    }
                    let left = p.child_by_field_name("left")?;
                    let (name, field) = self.target(left.named_child(0)?)?;
                    return Some((name, field));
                }
                "var_spec" | "const_spec" | "const_item" | "static_item" => {
                    let id = p.child_by_field_name("name")?;
                    return Some((self.text(id).to_ascii_lowercase(), false));
                }
                "property_declaration" => {
                    let decl = child_of_kind(p, "variable_declaration")?;
                    let id = first_identifier(decl)?;
                    let field = self.parent(p).is_some_and(|g| {
                        matches!(g.kind(), "class_body" | "class_member_declarations")
                    });
                    return Some((self.text(id).to_ascii_lowercase(), field));
                }
                "keyed_element" | "pair" | "field_initializer" => {
                    if !(from_right("value") || p.kind() == "keyed_element") {
                        return None;
                    }
                    let key = p
                        .child_by_field_name("key")
                        .or_else(|| p.child_by_field_name("field"))
                        .or_else(|| p.named_child(0))?;
                    if key.start_byte() == n.start_byte() {
                        return None;
                    }
                    let name = self.text(key).trim().to_ascii_lowercase();
                    return is_name(&name).then_some((name, true));
                }
                _ => return None,
            }
        }
    }

    /// An assignment's target: `x`, `self.x`, `this.x` (fields), `a.x`.
    fn target(&self, left: Node) -> Option<(String, bool)> {
        let (name, object) = match self.split_name(left) {
            Some((name, object)) => (name, object),
            None if left.kind() == "field_access" => (
                left.child_by_field_name("field")?,
                left.child_by_field_name("object"),
            ),
            None => (first_identifier(left)?, None),
        };
        let name = self.text(name).to_ascii_lowercase();
        let field = object.is_some_and(|o| {
            let o = self.text(o);
            o == "this" || o.eq_ignore_ascii_case("self")
        });
        is_name(&name).then_some((name, field))
    }

    /// Calls inside a Rust macro's tokens (`println!("{}", c.lock())`,
    /// `vec![TxnOp::put(…)]`): a name followed by a parenthesised token
    /// tree, and the name before its `.` or `::`.
    fn macro_calls(&self, tree: Node, out: &mut Parsed) {
        let count = tree.child_count();
        for i in 0..count {
            let Some(name) = tree.child(i as u32) else {
                continue;
            };
            let Some(args) = tree.child(i as u32 + 1) else {
                continue;
            };
            if name.kind() != "identifier"
                || args.kind() != "token_tree"
                || !self.text(args).starts_with('(')
                || args.start_byte() != name.end_byte()
            {
                continue;
            }
            let dot = i
                .checked_sub(1)
                .and_then(|k| tree.child(k as u32))
                .filter(|d| matches!(self.text(*d), "." | "::"));
            let receiver = dot
                .and_then(|_| i.checked_sub(2))
                .and_then(|k| tree.child(k as u32))
                .filter(|r| r.kind() == "identifier");
            let last = args.end_byte() - 1;
            let close = if self.text.as_bytes().get(last) == Some(&b')') {
                last
            } else {
                self.text.len()
            };
            let callee_start = receiver.map_or(name.start_byte(), |r| r.start_byte());
            out.calls.push(Call {
                name: self.text(name).to_ascii_lowercase(),
                at: name.start_byte(),
                receiver: receiver.map(|r| self.text(r).to_ascii_lowercase()),
                callee: self.text[callee_start..name.end_byte()].to_owned(),
                open: args.start_byte(),
                close,
                functions: None,
                held_in: None,
                statement: false,
                via_field: false,
            });
        }
    }
}

/// Whether `name` is an identifier (not a string key, not an expression).
fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn child_of_kind<'n>(node: Node<'n>, kind: &str) -> Option<Node<'n>> {
    let mut cursor = node.walk();
    let found = node.children(&mut cursor).find(|c| c.kind() == kind);
    found
}

fn first_identifier(node: Node) -> Option<Node> {
    if node.kind().ends_with("identifier") {
        return Some(node);
    }
    let mut cursor = node.walk();
    let children: Vec<Node> = node.named_children(&mut cursor).collect();
    children.into_iter().find_map(first_identifier)
}

/// The outermost function nodes inside `node` (closures, lambdas, func
/// literals, anonymous classes and objects, Rust async blocks).
fn function_nodes<'n>(node: Node<'n>, out: &mut Vec<Node<'n>>) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let function = matches!(
            child.kind(),
            "closure_expression"
                | "async_block"
                | "func_literal"
                | "lambda_expression"
                | "lambda_literal"
                | "anonymous_function"
                | "object_literal"
                | "lambda"
                | "arrow_function"
                | "function_expression"
                | "function"
                | "generator_function"
        ) || (child.kind() == "object_creation_expression"
            && child_of_kind(child, "class_body").is_some());
        if function {
            out.push(child);
        } else {
            function_nodes(child, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(language: Language, text: &str) -> Parsed {
        parse(language, text).expect("a grammar")
    }

    /// `(name, receiver, callee)` of every call.
    fn calls(p: &Parsed) -> Vec<(&str, Option<&str>, &str)> {
        p.calls
            .iter()
            .map(|c| (c.name.as_str(), c.receiver.as_deref(), c.callee.as_str()))
            .collect()
    }

    #[test]
    fn strings_of_every_shape_are_literals_and_comments_are_comments() {
        let p = parsed(
            Language::Python,
            "s = \"\"\"\nr.set('k', 1, nx=True)\n\"\"\"  # a comment\nt = rb'x'\nu = f\"{a}b\"\n",
        );
        let texts: Vec<&str> = p.strings.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["\nr.set('k', 1, nx=True)\n", "x", "{a}b"]);
        assert_eq!(p.strings[0].bound.as_deref(), Some("s"));
        assert_eq!(p.comments.len(), 1);
        assert!(p.calls.is_empty(), "a call in a string is text");

        let p = parsed(
            Language::Rust,
            "const Q: &str = r##\"UPDATE \"t\"\"##; fn f() { let c = 'a'; }",
        );
        let texts: Vec<&str> = p.strings.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["UPDATE \"t\"", "a"]);
        assert_eq!(p.strings[0].bound.as_deref(), Some("q"));

        let p = parsed(
            Language::JavaScript,
            "const q = `UPDATE t ${x}`; /* lock() */ // lock()\n",
        );
        assert_eq!(p.strings[0].text, "UPDATE t ${x}");
        assert_eq!(p.comments.len(), 2);
    }

    #[test]
    fn calls_have_a_name_a_receiver_and_their_arguments() {
        let text =
            "fn f() { let m = Foo::new(c).lock().await?; self.mu.lock(); vec![TxnOp::put(k)]; }";
        let p = parsed(Language::Rust, text);
        assert_eq!(
            calls(&p),
            [
                ("new", Some("foo"), "Foo::new"),
                ("lock", Some("new"), "Foo::new(c).lock"),
                ("lock", Some("mu"), "self.mu.lock"),
                ("put", Some("txnop"), "TxnOp::put"),
            ]
        );
        let lock = &p.calls[1];
        assert_eq!(lock.held_in, Some(("m".to_owned(), false)));
        assert_eq!(&text[lock.open..=lock.close], "()");

        let p = parsed(
            Language::Go,
            "package p\nfunc f() { args := redis.SetArgs{Mode: \"NX\"}; c := &T{locker: redislock.New(rdb)} }",
        );
        assert_eq!(
            calls(&p),
            [
                ("setargs", Some("redis"), "redis.SetArgs"),
                ("t", None, "T"),
                ("new", Some("redislock"), "redislock.New"),
            ]
        );
        assert_eq!(p.calls[0].held_in, Some(("args".to_owned(), false)));
        assert_eq!(p.calls[2].held_in, Some(("locker".to_owned(), true)));

        let p = parsed(
            Language::Java,
            "class A { private final Lock lock = hz.getCPSubsystem().getLock(\"x\"); void r() { this.lock.lock(); new Foo.Bar(); } }",
        );
        assert_eq!(
            calls(&p),
            [
                ("getcpsubsystem", Some("hz"), "hz.getCPSubsystem"),
                (
                    "getlock",
                    Some("getcpsubsystem"),
                    "hz.getCPSubsystem().getLock"
                ),
                ("lock", Some("lock"), "this.lock.lock"),
                ("bar", Some("foo"), "Foo.Bar"),
            ]
        );
        assert_eq!(p.calls[1].held_in, Some(("lock".to_owned(), true)));
        assert!(p.calls[2].statement);
    }

    #[test]
    fn functions_handed_to_a_call_are_found_wherever_they_are_in_its_arguments() {
        let text = "mutex.withLock { save() }\nscope.launch(io) { run() }\nf(1)\n";
        let p = parsed(Language::Kotlin, text);
        let with_lock = &p.calls[0];
        assert_eq!(with_lock.name, "withlock");
        let (a, b) = with_lock.functions.expect("the trailing lambda");
        assert_eq!(&text[a..b], "{ save() }");
        let launch = p.calls.iter().find(|c| c.name == "launch").unwrap();
        let (a, b) = launch.functions.expect("the lambda after the parentheses");
        assert_eq!(&text[a..b], "{ run() }");
        assert!(p
            .calls
            .iter()
            .find(|c| c.name == "f")
            .unwrap()
            .functions
            .is_none());

        let text = "package p\nfunc f() { leaderelection.RunOrDie(ctx, Config{Callbacks: Callbacks{OnStartedLeading: func(ctx context.Context) { run() }}}) }";
        let p = parsed(Language::Go, text);
        let run = p.calls.iter().find(|c| c.name == "runordie").unwrap();
        let (a, b) = run.functions.expect("the callback in the config");
        assert!(text[a..b].starts_with("func(ctx"));
    }

    #[test]
    fn functions_are_scopes_with_their_names_and_decorators() {
        let text = "@under(etcd.lock(\"r\"))\ndef job():\n    pass\n\nf = lambda: 1\n";
        let p = parsed(Language::Python, text);
        let names: Vec<(Option<&str>, usize)> = p
            .functions
            .iter()
            .map(|f| (f.name.as_deref(), f.start))
            .collect();
        assert_eq!(
            names,
            [(Some("job"), 0), (Some("f"), text.find("lambda").unwrap())]
        );

        let p = parsed(
            Language::TypeScript,
            "class A { run = async () => { x(); }; m() {} }\nconst g = function () {};\n",
        );
        let names: Vec<Option<&str>> = p.functions.iter().map(|f| f.name.as_deref()).collect();
        assert_eq!(names, [Some("run"), Some("m"), Some("g")]);
    }

    #[test]
    fn a_with_on_a_name_takes_what_it_holds() {
        let text = "async def f(self):\n    with self.lock as held:\n        pass\n    async with mutex, other:\n        pass\n    with r.lock('k'):\n        pass\n";
        let p = parsed(Language::Python, text);
        let withs: Vec<(&str, &str, usize)> = p
            .withs
            .iter()
            .map(|w| (w.name.as_str(), w.what.as_str(), w.end))
            .collect();
        let colon = |from: &str| text.find(from).unwrap() + from.find(':').unwrap();
        assert_eq!(
            withs,
            [
                (
                    "lock",
                    "with self.lock as held",
                    colon("with self.lock as held:")
                ),
                ("mutex", "with mutex, other", colon("with mutex, other:")),
                ("other", "with mutex, other", colon("with mutex, other:")),
            ],
            "a call in a with makes its lock there"
        );
    }

    #[test]
    fn a_file_with_syntax_errors_still_gives_its_calls() {
        let text = "def broken(:\n    pass\n\ndef ok():\n    r.lock('x')\n";
        let p = parsed(Language::Python, text);
        assert!(p
            .calls
            .iter()
            .any(|c| c.name == "lock" && c.receiver.as_deref() == Some("r")));
    }
}
