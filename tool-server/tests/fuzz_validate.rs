//! Property test of `validate_tool_request` against an independent reading of
//! the published catalogue: for arbitrary JSON (random values, and requests
//! built from the catalogue's own names near every bound) the validator
//! never panics, accepts exactly what the schemas allow, returns the input
//! arguments unchanged when it accepts, and names the offending argument
//! when it refuses. `PROPTEST_CASES` scales it (see `fuzz/run`).

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Number, Value};
use tool_server::{validate_tool_request, Operation, ValidationError, AGENT_TOOLS};

fn cases(bounded: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(bounded)
}

/// Every argument name the catalogue declares, plus near misses.
fn arg_names() -> Vec<String> {
    let mut names: Vec<String> = AGENT_TOOLS.iter().flat_map(|s| s.properties().keys().cloned()).collect();
    names.sort();
    names.dedup();
    names.extend(["nodeid", "node_id", "", "__proto__", "x\0", "ref ", "operation", "args"].map(String::from));
    names
}

fn op_names() -> Vec<String> {
    let mut names: Vec<String> = Operation::ALL.iter().map(|o| o.name().to_owned()).collect();
    names.extend(["", "Canvas_List", "canvas_list ", "rm_rf", "session_info\0"].map(String::from));
    names
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => ".{0,12}",
        2 => prop::sample::select(vec![
            "overview", "browser", "editor", "diff", "claude", "custom", "Overview", "gpt", "", "a\0b", "\u{0}",
        ])
        .prop_map(String::from),
        // Lengths on both sides of the item limit (255/256 chars) and the string limit (64000/64001).
        1 => (prop::sample::select(vec![254usize, 255, 256, 257, 63_999, 64_000, 64_001]), prop::sample::select(vec!['a', 'é', '😀']))
            .prop_map(|(n, c)| std::iter::repeat_n(c, n).collect()),
    ]
}

fn number() -> impl Strategy<Value = Value> {
    let specials = prop::sample::select(vec![
        0.0,
        -0.0,
        0.5,
        1.0,
        1.5,
        -1.0,
        2000.0,
        999_999.999,
        1_000_000.0,
        1_000_000.000_001,
        -1_000_000.0,
        -1_000_000.5,
        1e300,
        -1e300,
        5e-324,
        f64::MAX,
        f64::MIN,
    ]);
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-2_000_000i64..2_000_000).prop_map(Value::from),
        any::<f64>().prop_filter_map("JSON numbers are finite", |f| Number::from_f64(f).map(Value::Number)),
        specials.prop_map(|f| Value::Number(Number::from_f64(f).expect("finite"))),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf =
        prop_oneof![Just(Value::Null), any::<bool>().prop_map(Value::Bool), number(), text().prop_map(Value::String)];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..8).prop_map(Value::Array),
            btree_map(prop::sample::select(arg_names()), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A value aimed at one argument's schema: right type near its bounds, or something else.
fn arg_value() -> impl Strategy<Value = Value> {
    let ids = prop_oneof![
        vec(text().prop_map(Value::String), 0..4),
        (0usize..3).prop_map(|extra| (0..(99 + extra)).map(|i| Value::String(format!("n{i}"))).collect()),
        vec(json_value(), 1..3),
    ]
    .prop_map(Value::Array);
    prop_oneof![3 => text().prop_map(Value::String), 3 => number(), 1 => any::<bool>().prop_map(Value::Bool), 2 => ids, 1 => json_value()]
}

/// A value of the type `schema` asks for, near its bounds and enum, or (sometimes) anything.
fn typed_value(schema: &Value) -> BoxedStrategy<Value> {
    let enum_values: Vec<Value> = schema.get("enum").and_then(Value::as_array).cloned().unwrap_or_default();
    let typed = match schema["type"].as_str() {
        Some("string") if !enum_values.is_empty() => prop::sample::select(enum_values).boxed(),
        Some("string") => text().prop_map(Value::String).boxed(),
        Some("number" | "integer") => prop_oneof![
            (-1_100_000i64..1_100_000).prop_map(Value::from),
            (-1_100_000.0f64..1_100_000.0).prop_map(|f| Value::Number(Number::from_f64(f).expect("finite"))),
            number(),
        ]
        .boxed(),
        Some("boolean") => any::<bool>().prop_map(Value::Bool).boxed(),
        _ => arg_value().boxed(),
    };
    prop_oneof![4 => typed, 1 => arg_value()].boxed()
}

/// Requests shaped like real calls: a catalogue operation with most of its own arguments
/// (each drawn near its bounds), sometimes a stray one.
fn shaped_request() -> impl Strategy<Value = Value> {
    let op = (0..AGENT_TOOLS.len()).prop_flat_map(|i| {
        let spec = &AGENT_TOOLS[i];
        let own: Vec<String> = spec.properties().keys().cloned().collect();
        let picks: Vec<_> =
            spec.properties().values().map(|schema| (prop::bool::weighted(0.8), typed_value(schema))).collect();
        let stray = prop::option::weighted(0.1, (prop::sample::select(arg_names()), arg_value()));
        let args = (picks, stray).prop_map(move |(picks, stray)| {
            let mut args: Map<String, Value> =
                own.iter().zip(picks).filter(|(_, (keep, _))| *keep).map(|(k, (_, v))| (k.clone(), v)).collect();
            if let Some((k, v)) = stray {
                args.insert(k, v);
            }
            Value::Object(args)
        });
        let args = prop_oneof![8 => args, 1 => Just(Value::Null), 1 => json_value()];
        (Just(Value::String(spec.name().to_owned())), args)
    });
    let other_op = (prop_oneof![prop::sample::select(op_names()).prop_map(Value::String), json_value()], json_value());
    let pair = prop_oneof![8 => op, 1 => other_op];
    (pair, prop::bool::weighted(0.9), prop::option::weighted(0.05, (text(), json_value()))).prop_map(
        |((op, args), with_args, extra)| {
            let mut request = Map::new();
            request.insert("operation".into(), op);
            if with_args {
                request.insert("args".into(), args);
            }
            if let Some((k, v)) = extra {
                request.insert(k, v);
            }
            Value::Object(request)
        },
    )
}

fn request() -> impl Strategy<Value = Value> {
    prop_oneof![5 => shaped_request(), 1 => json_value()]
}

/// The oracle: whether one value satisfies one property schema, read only from the schema JSON
/// plus the documented global rules (no NUL characters; numbers are finite).
fn satisfies(schema: &Value, value: &Value) -> bool {
    let max_len = |s: &Value| s.get("maxLength").and_then(Value::as_u64).map_or(usize::MAX, |n| n as usize);
    match schema["type"].as_str() {
        Some("string") => {
            let Some(s) = value.as_str() else { return false };
            let in_enum = schema.get("enum").and_then(Value::as_array).is_none_or(|e| e.iter().any(|a| a == value));
            s.chars().count() <= max_len(schema) && !s.contains('\0') && in_enum
        }
        Some(kind @ ("number" | "integer")) => {
            let Some(n) = value.as_f64() else { return false };
            let integral = kind == "number" || n.fract() == 0.0;
            let min_ok = schema.get("minimum").and_then(Value::as_f64).is_none_or(|m| n >= m);
            let max_ok = schema.get("maximum").and_then(Value::as_f64).is_none_or(|m| n <= m);
            let exclusive_ok = schema.get("exclusiveMinimum").and_then(Value::as_f64).is_none_or(|m| n > m);
            // A number's magnitude is bounded on both sides even where the schema states only one bound.
            n.is_finite() && n.abs() <= tool_server::MAX_NUMBER && integral && min_ok && max_ok && exclusive_ok
        }
        Some("boolean") => value.is_boolean(),
        Some("array") => {
            let Some(items) = value.as_array() else { return false };
            let min = schema["minItems"].as_u64().unwrap_or(0) as usize;
            let max = schema["maxItems"].as_u64().map_or(usize::MAX, |n| n as usize);
            (min..=max).contains(&items.len()) && items.iter().all(|item| satisfies(&schema["items"], item))
        }
        other => panic!("the catalogue uses a schema type the oracle does not know: {other:?}"),
    }
}

/// The oracle's verdict on a whole request: Some(args) when it must be accepted.
fn expected(raw: &Value) -> Option<(Operation, Map<String, Value>)> {
    let object = raw.as_object()?;
    if object.keys().any(|k| k != "operation" && k != "args") {
        return None;
    }
    let op = Operation::from_name(object.get("operation")?.as_str()?)?;
    let args = match object.get("args") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(args)) => args.clone(),
        Some(_) => return None,
    };
    let spec = AGENT_TOOLS.iter().find(|s| s.operation == op).expect("every operation has a spec");
    let schema = &spec.input_schema;
    let properties = schema["properties"].as_object().expect("properties");
    let closed = schema["additionalProperties"] == Value::Bool(false);
    let required = schema["required"].as_array().expect("required");
    let ok = args.iter().all(|(k, v)| match properties.get(k) {
        Some(p) => satisfies(p, v),
        None => !closed,
    }) && required.iter().all(|r| args.contains_key(r.as_str().expect("required names are strings")))
        && (spec.requires_one_of.is_empty() || spec.requires_one_of.iter().any(|k| args.contains_key(*k)));
    ok.then_some((op, args))
}

/// The argument an error is about, if it is about one.
fn argument_of(e: &ValidationError) -> Option<&str> {
    use ValidationError::*;
    match e {
        MissingArgument { argument, .. }
        | UnknownArgument { argument, .. }
        | WrongType { argument, .. }
        | NotFinite { argument }
        | OutOfRange { argument }
        | BelowMinimum { argument, .. }
        | StringTooLong { argument }
        | ContainsNul { argument }
        | NotInEnum { argument, .. }
        | ArrayLength { argument }
        | ItemNotString { argument, .. }
        | ItemTooLong { argument, .. }
        | UnsupportedSchema { argument } => Some(argument),
        _ => None,
    }
}

fn check(raw: &Value) -> Result<(), TestCaseError> {
    let verdict = validate_tool_request(raw);
    let oracle = expected(raw);
    match (&verdict, &oracle) {
        (Ok(request), Some((op, args))) => {
            prop_assert_eq!(request.operation, *op);
            prop_assert_eq!(&request.args, args, "accepted arguments must be passed on unchanged");
        }
        (Err(e), None) => {
            let message = e.to_string();
            prop_assert!(!message.is_empty());
            prop_assert!(!matches!(e, ValidationError::UnsupportedSchema { .. }), "catalogue bug: {}", message);
            if let Some(argument) = argument_of(e) {
                prop_assert!(message.contains(argument), "{:?} does not name {:?}", message, argument);
                let args = raw["args"].as_object();
                match e {
                    ValidationError::MissingArgument { .. } => {
                        prop_assert!(args.is_none_or(|a| !a.contains_key(argument)))
                    }
                    ValidationError::UnknownArgument { .. } => {
                        // Echoed names are escaped and cut to 64 characters: some input key must render so.
                        let names = args.map(|a| a.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
                        let shown = argument.trim_end_matches('…');
                        prop_assert!(
                            names
                                .iter()
                                .any(|k| k.chars().take(64).flat_map(char::escape_debug).collect::<String>() == shown),
                            "{:?} is not one of the keys {:?}",
                            argument,
                            names
                        );
                    }
                    _ => {
                        // Value errors name the key itself (array items as `key[index]`).
                        let key = argument.split('[').next().unwrap_or(argument);
                        prop_assert!(args.is_some_and(|a| a.contains_key(key)), "{:?} is not an input key", argument);
                    }
                }
            }
        }
        (Ok(request), None) => prop_assert!(false, "accepted a request the schemas refuse: {} -> {:?}", raw, request),
        (Err(e), Some(_)) => prop_assert!(false, "refused a request the schemas allow: {} -> {}", raw, e),
    }
    Ok(())
}

#[test]
fn validator_agrees_with_an_independent_reading_of_the_catalogue() {
    let config = Config { cases: cases(2_000), failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config);
    if let Err(e) = runner.run(&request(), |raw| check(&raw)) {
        panic!("{e}");
    }
}

/// The generator must reach acceptance for every operation, or the property
/// above would hold vacuously for the accepting side.
#[test]
fn the_generator_reaches_acceptance_for_every_operation() {
    use proptest::strategy::ValueTree;
    let mut runner = TestRunner::deterministic();
    let strategy = shaped_request();
    let mut accepted = std::collections::HashSet::new();
    for _ in 0..20_000 {
        let raw = strategy.new_tree(&mut runner).expect("generate").current();
        if let Ok(request) = validate_tool_request(&raw) {
            accepted.insert(request.operation);
        }
        if accepted.len() == Operation::ALL.len() {
            break;
        }
    }
    let missing: Vec<&str> = Operation::ALL.iter().filter(|o| !accepted.contains(o)).map(|o| o.name()).collect();
    assert!(missing.is_empty(), "never accepted: {missing:?}");
}
