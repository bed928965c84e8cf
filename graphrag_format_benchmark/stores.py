"""The GraphRAG frameworks' stores read as graphs: the graph a user's framework already keeps.

In: --graph pointed at a store (or its folder), or a GraphML file as networkx writes it. Out: the tool's JSON records
of nodes and edges (as inputs.read_graph_file returns them; benchmark.validate_graph checks them like any file), the
raw bytes the manifest hashes, and whether the store's edges have a direction (UNDIRECTED).

- graphrag: Microsoft GraphRAG's output folder, entities.parquet and relationships.parquet (create_final_*.parquet
  in releases before 1.0), read by pyarrow: an entity's title is its id and name, its type its type, its
  description a property; a relationship's ends are titles, its relation its description (GraphRAG has no relation
  type: the description is what its context shows), its weight a property.
- lightrag: LightRAG's graph_chunk_entity_relation.graphml (or its working folder), streamed (streamed_graphml): the
  node id is the entity name, entity_type its type, description a property; an edge's relation is its description,
  keywords and weight properties.
- llamaindex: LlamaIndex's property_graph_store.json (or its persist folder), SimplePropertyGraphStore's JSON: each
  entity node (name, label, properties) a node keyed as the store keys it, each relation between two entities an
  edge (label, properties); chunk nodes (text) and their relations are the source text, not the graph.

The frameworks keep bookkeeping beside the facts (BOOKKEEPING: source and chunk ids, file paths,
timestamps, truncation flags, embeddings, layout coordinates, degrees they derive) and leave it out of
the context they send; so does a read store, and of the facts it keeps what the context does not show
(UNSENT, UNTYPED), so that every format compared holds what the framework sends; said once on stderr;
--store-fields all keeps everything. GraphRAG's and LightRAG's graphs are undirected (networkx Graphs):
each edge is shown once, in the direction it is stored, and an answer may walk or cite it either way.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._article import MAX_INPUT_BYTES, RESERVED_KEYS, BenchmarkError, display, read_input, read_json, warn
from .extras import not_installed

# four words or more: an edge's description as its relation, not a relation's name
DESCRIPTION = re.compile(r"\S+(\s+\S+){3,}")


def is_description(relation: str) -> bool:
    """Whether a relation is a description (a store's edge: 'Leslie Lamport designed TLA+.'), not a name (LEADS)."""
    return DESCRIPTION.fullmatch(relation.strip()) is not None


def replace_names(text: str, mapping: dict[str, str]) -> str:
    """Each name of mapping in text, as a whole word or words (case aside), replaced by its value in one pass, the
    longest first at a place: a description's ends renamed ('Leslie Lamport designed TLA+.' -> 'Ann Lee designed Zed.')
    or masked; 'AI' in 'Cairo' is no name."""
    names = sorted((n for n in mapping if n.strip()), key=len, reverse=True)
    if not names:
        return text
    folded = {n.casefold(): v for n, v in mapping.items()}
    low = text.lower()
    if len(low) != len(text) or any(
        len(n.lower()) != len(n) for n in names
    ):  # lower() changed a length: the regex's way
        pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, names)) + r")(?!\w)", re.IGNORECASE)
        return pattern.sub(lambda m: folded.get(m.group(0).casefold(), m.group(0)), text)
    spans = []  # (start, -length, value) of each whole-word occurrence: no regex compiled per description
    for name in names:
        key, at = name.lower(), low.find(name.lower())
        while at != -1:
            end = at + len(key)
            if (at == 0 or not text[at - 1].isalnum() and text[at - 1] != "_") and (
                end == len(text) or not text[end].isalnum() and text[end] != "_"
            ):
                spans.append((at, -len(key), folded.get(name.casefold(), name)))
            at = low.find(key, at + 1)
    out, last = [], 0
    for at, minus, value in sorted(spans):  # leftmost first, the longest at a place; none inside one taken
        if at >= last:
            out += [text[last:at], value]
            last = at - minus
    return "".join(out) + text[last:]


# a node's type when a store or file gives none (LlamaIndex's own default label); inputs and frameworks too
DEFAULT_TYPE = "entity"
DEFAULT_RELATION = (
    "related_to"  # an edge's relation when a store or GraphML file gives none (no description, no keywords)
)
LIGHTRAG_FILE = "graph_chunk_entity_relation.graphml"
LLAMAINDEX_FILE = "property_graph_store.json"
GRAPHRAG_FILES = (
    ("entities.parquet", "relationships.parquet"),
    ("create_final_entities.parquet", "create_final_relationships.parquet"),
)
UNDIRECTED = frozenset(("graphrag", "lightrag"))  # stores whose graphs have no direction: either way is a valid walk
BOOKKEEPING = frozenset(
    (
        # LightRAG: where a record came from and when; its entity_id repeats the node id
        "source_id",
        "file_path",
        "created_at",
        "updated_at",
        "truncate",
        "entity_id",
        # Microsoft GraphRAG: row ids, text units, layout, degrees and frequencies it derives
        "id",
        "human_readable_id",
        "short_id",
        "text_unit_ids",
        "document_ids",
        "community_ids",
        "x",
        "y",
        "degree",
        "combined_degree",
        "source_degree",
        "target_degree",
        "frequency",
        "rank",
        "level",
        "n_tokens",
        # LlamaIndex: the chunk a triplet came from, document metadata its readers attach
        "triplet_source_id",
        "ref_doc_id",
        "doc_id",
        "document_id",
        "file_name",
        "file_type",
        "file_size",
        "creation_date",
        "last_modified_date",
        "_node_content",
        "_node_type",
        # any of them: vectors
        "embedding",
        "description_embedding",
        "name_embedding",
        "graph_embedding",
        "text_embedding",
        "chunk_id",
        "chunk_ids",
    )
)


# What each framework's context leaves out of what its store keeps, besides bookkeeping: LightRAG's relationship lines
# carry no keywords or weight (they steer its retrieval); GraphRAG's entity table and LlamaIndex's str(EntityNode) show
# no type (a GraphRAG entity's type, a LlamaIndex node's label), so a store read as sent is untyped there.
UNSENT = {"lightrag": frozenset(("keywords", "weight")), "graphrag": frozenset(), "llamaindex": frozenset()}
UNTYPED = frozenset(("graphrag", "llamaindex"))  # frameworks whose context shows no entity type
# a record's own fields, besides "id"
NODE_OWN, EDGE_OWN = (
    frozenset(("name", "type")),
    frozenset(("source", "relation", "target")),
)
STORE_FIELDS = ("sent", "all")  # --store-fields: what the framework sends (default), or every field the store keeps
# LlamaIndex's layouts send different fields: without include_properties a triplet shows node ids (a name with '"'
# made spaces) and relation labels only; with it str() prints every property, bookkeeping included.
LLAMAINDEX_WITH_PROPERTIES = frozenset(("llamaindex_properties", "llamaindex_text_properties"))
# a framework's default settings
DEFAULT_LAYOUT = {
    "graphrag": "graphrag",
    "lightrag": "lightrag",
    "llamaindex": "llamaindex",
}


def store_layout(kind: str, formats: tuple[str, ...] = (), baseline: str | None = None) -> str:
    """The layout of kind's framework whose context a store is read as: the baseline when it is one of the framework's
    layouts, else the first of them in formats, else the framework's default."""
    own = [f for f in (baseline, *formats) if f is not None and (f == kind or f.startswith(kind + "_"))]
    return own[0] if own else DEFAULT_LAYOUT[kind]


STORE_KINDS = "kinds not sent"  # read_store's records: node id -> the store's type where its framework shows none
STORE_ROWS = "rows of the store"  # read_store's records: where each record is in the store (StoreRows)

# the store's own name of each field of the tool's records: (nodes', edges'); a property keeps its own name
STORE_FIELD_NAMES = {
    "graphrag": (
        {"id": "title", "name": "title", "type": "type"},
        {"source": "source", "target": "target", "relation": "description"},
    ),
    "lightrag": (
        {"id": "id", "name": "id", "type": "entity_type"},
        {"source": "source", "target": "target", "relation": "description"},
    ),
    "llamaindex": (
        {"id": "key", "name": "name", "type": "label"},
        {"source": "source_id", "target": "target_id", "relation": "label"},
    ),
}
_DUPLICATE = re.compile(r" duplicates nodes\[(\d+)\](?=(?: after NFC normalization)?; node ids must be unique$)")
_RECORD = re.compile(r"(nodes|edges)\[(\d+)\](?:\.(\S+))?")  # validate_graph's place of a record: nodes[12].id


class StoreRows:
    """Where a store's records are, so that a problem validate_graph finds names the store's own row, node or relation
    and field ("entities.parquet row 12 (title)"), not the index of the records made of it ("nodes[12].id").
    place(kind, i): the file and the place in it of record i of 'nodes' or 'edges'."""

    def __init__(self, kind: str, place: Callable[[str, int], tuple[str, str]]) -> None:
        self.fields = dict(zip(("nodes", "edges"), STORE_FIELD_NAMES[kind]))
        self.place = place

    def named(self, message: str, src: str) -> str:
        """A message of validate_graph's about --graph src, its record named in the store: "kg: nodes[12].id 'A'
        duplicates nodes[0]; ..." -> "kg/entities.parquet row 12 (title) 'A' duplicates row 0; ..."."""
        found = _RECORD.match(message, len(src) + 2) if message.startswith(f"{src}: ") else None
        if found is None:
            return message
        kind, field = found[1], found[3]
        file, place = self.place(kind, int(found[2]))
        rest = _DUPLICATE.sub(lambda m: " duplicates " + self.place("nodes", int(m[1]))[1], message[found.end() :], 1)
        return f"{file} {place}" + (f" ({self.fields[kind].get(field, field)})" if field else "") + rest


class Kept:
    """The fields a store's records keep: with 'sent', what the framework's context shows in layout; bookkeeping and the
    fields the framework does not send are left out, counted by name and said once by report."""

    def __init__(self, kind: str, store_fields: str = "sent", layout: str | None = None) -> None:
        layout = layout or DEFAULT_LAYOUT[kind]
        self.all = store_fields == "all"  # asked for: every record too, not only every field
        self.everything = self.all or layout in LLAMAINDEX_WITH_PROPERTIES
        self.nothing = kind == "llamaindex" and not self.everything  # a triplet of ids: no property is sent
        self.unsent = frozenset() if self.everything else UNSENT[kind]
        self.untyped = kind in UNTYPED and store_fields != "all"
        self.dropped: dict[str, int] = {}  # bookkeeping
        self.not_sent: dict[str, int] = {}
        self.renamed: dict[str, int] = {}  # fields named like the record's own, kept as KEY_property
        self.not_text = 0  # descriptions of another type than text
        self.kinds: dict[str, str] = {}  # node id -> the type its store holds and its framework does not show

    def type_of(self, value: object, node_id: str) -> str:
        """A node's type as sent: its store's type (or label), or DEFAULT_TYPE where the framework shows none (the
        store's type then kept in kinds: new nodes are named like the nodes of their kind, and nothing shows it)."""
        text = _text(value)
        if self.untyped and text is not None:
            self.not_sent["type"] = self.not_sent.get("type", 0) + 1
            self.kinds[node_id] = text
        return text if text is not None and not self.untyped else DEFAULT_TYPE

    def fields(self, record: dict[str, Any], where: str, own: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The record's properties: None and NaN are no value; a list or map is its JSON text; bookkeeping and what the
        framework does not send are left out (a store's own row id, "id", always: the node's id is what the framework
        keys it by). A field named like one of the record's own (own: a node's name and type, an edge's source,
        relation and target) or like a word the formats keep (benchmark.RESERVED_KEYS) is kept as KEY_property: the
        record's own field wins, and nothing is lost."""
        kept = {}
        for key, value in record.items():
            if key in own or key in RESERVED_KEYS:
                self.renamed[key] = self.renamed.get(key, 0) + 1
                key = f"{key}_property"
            if (
                value is None or isinstance(value, float) and math.isnan(value) or key == "id"
            ):  # a row key, never a fact
                continue
            if key in BOOKKEEPING and not self.everything:
                self.dropped[key] = self.dropped.get(key, 0) + 1
                continue
            if key in self.unsent or self.nothing:
                self.not_sent[key] = self.not_sent.get(key, 0) + 1
                continue
            if not isinstance(key, str):
                raise BenchmarkError(f"{where}: a field name is {key!r}, not a string; fix the store")
            try:
                kept[key] = (
                    value
                    if isinstance(value, (str, int, float, bool))
                    else _scalar(value) or json.dumps(_plain(value), ensure_ascii=False)
                )
            except TooDeep:
                raise BenchmarkError(
                    f"{where}: its {key!r} is nested more than {MAX_NESTING} levels deep; fix the store"
                ) from None
        return kept

    def report(self, where: str) -> None:
        said = []
        for what, counts in (
            ("bookkeeping field(s)", self.dropped),
            ("field(s) its context does not show", self.not_sent),
        ):
            names = sorted(counts, key=lambda k: (-counts[k], k))
            if names:
                said.append(f"{len(names)} {what} ({', '.join(names[:6])}{', ...' if len(names) > 6 else ''})")
        if said:
            warn(
                f"{where}: left out what the framework does not send: {'; '.join(said)}; --store-fields all keeps them"
            )
        if self.renamed:
            names = sorted(self.renamed)
            warn(
                f"{where}: {sum(self.renamed.values()):,} field(s) named like a record's own ({', '.join(names[:6])}) "
                "kept as "
                f"{', '.join(n + '_property' for n in names[:6])}: the record's own field is the one its layout shows"
            )
        if self.not_text:
            warn(
                f"{where}: {self.not_text:,} description(s) are not text; each is shown as the framework prints it "
                "(str(), none for "
                "a zero)"
            )


MAX_NESTING = (
    100  # levels of lists and maps in one property value: deeper is no fact a context shows, and recursion has a floor
)


class TooDeep(ValueError):
    """A property value nested past MAX_NESTING levels."""


def _plain(value: object, depth: int = 0) -> object:
    """A parquet or JSON value as JSON can write it: numpy-like arrays and tuples as lists."""
    if depth > MAX_NESTING:
        raise TooDeep
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        items: Any = value.tolist() if hasattr(value, "tolist") else value  # a numpy-like array's items, as a list
        return [_plain(v, depth + 1) for v in items]
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)


def _scalar(value: object) -> str | float | None:
    """A parquet value of a scalar type JSON has no word for, as text a reader reads: a date or time in ISO form, a
    decimal as its number, bytes as UTF-8 (else hex); None for a list or map (written as JSON)."""
    import datetime
    import decimal

    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return str(value)
    if isinstance(value, decimal.Decimal):
        return float(value) if value.is_finite() else str(value)
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return bytes(value).hex()
    return None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value != "" else None


# -----------------------------------------------------------------------------
# telling a store apart: by its folder, its file's name, or (GraphML) its keys

LIGHTRAG_KEYS = re.compile(rb'<key\b[^>]*attr\.name="(entity_type|keywords)"')


def store_kind(path: Path) -> str | None:
    """The store --graph points at, or None for a plain graph file: a folder holding a store's files, a store file by
    its name, a .parquet file of GraphRAG's, a GraphML file with LightRAG's keys (entity_type and keywords)."""
    if path.is_dir():
        found = [
            kind
            for kind, here in (
                ("graphrag", any((path / e).is_file() for e, _ in GRAPHRAG_FILES)),
                ("lightrag", (path / LIGHTRAG_FILE).is_file()),
                ("llamaindex", (path / LLAMAINDEX_FILE).is_file()),
            )
            if here
        ]
        if len(found) > 1:
            warn(
                f"--graph {display(path)}: holds the stores of {', '.join(found)}; read as {found[0]}'s "
                "(--graph-format "
                f"{' or '.join(found[1:])} reads another)"
            )
        if found:
            return found[0]
        if path.name in (LIGHTRAG_FILE, LLAMAINDEX_FILE, *GRAPHRAG_FILES[0], *GRAPHRAG_FILES[1]):
            raise BenchmarkError(
                f"--graph {display(path)}: a folder named like a store's file; point --graph at the file, or at the "
                "folder that holds it"
            )
        inside = [
            sub for sub in ("output", "storage", "rag_storage") if (path / sub).is_dir() and _holds_store(path / sub)
        ]
        if inside:
            raise BenchmarkError(
                f"--graph {display(path)}: the store is in {display(path / inside[0])}; point --graph there"
            )
        raise BenchmarkError(
            f"--graph {display(path)}: a folder, but not a store ({GRAPHRAG_FILES[0][0]} and {GRAPHRAG_FILES[0][1]}; "
            f"{LIGHTRAG_FILE}; {LLAMAINDEX_FILE}); give the store's folder or a graph file"
        )
    if path.name == LIGHTRAG_FILE:
        return "lightrag"
    if path.name == LLAMAINDEX_FILE:
        return "llamaindex"
    if path.suffix.lower() == ".parquet":
        return "graphrag"
    if path.suffix.lower() == ".graphml" and path.is_file():
        with open(path, "rb") as f:
            head = f.read(65536)
        if {m.group(1) for m in LIGHTRAG_KEYS.finditer(head)} == {b"entity_type", b"keywords"}:
            warn(
                f"--graph {display(path)}: read as LightRAG's store (its keys entity_type and keywords); "
                "--graph-format graphml reads it as a plain GraphML file"
            )
            return "lightrag"
    return None


def _holds_store(folder: Path) -> bool:
    return any(
        (folder / f).is_file() for f in (LIGHTRAG_FILE, LLAMAINDEX_FILE, GRAPHRAG_FILES[0][0], GRAPHRAG_FILES[1][0])
    )


def read_store(
    kind: str,
    path: Path,
    store_fields: str = "sent",
    parsed: tuple[object, bytes] | None = None,
    layout: str | None = None,
) -> tuple[dict[str, Any], bytes]:
    """The store of kind at path (its file, or the folder holding it) as the tool's JSON records, and its raw bytes.
    parsed: a JSON file's data and bytes when already read (a .json file told apart by its keys), not read twice;
    layout: the framework's layout whose context the store is read as (store_layout)."""
    kept = Kept(kind, store_fields, layout)
    if kind == "graphrag":
        records, raw, where = read_graphrag(path, kept)
    elif kind == "lightrag":
        file = path / LIGHTRAG_FILE if path.is_dir() else path
        raw = read_input(file, "--graph")
        where = display(file)
        records = read_lightrag(raw, where, kept)
    else:
        file = path / LLAMAINDEX_FILE if path.is_dir() else path
        data, raw = parsed if parsed is not None else read_llamaindex_json(file)
        where = display(file)
        records = read_llamaindex(data, where, kept)
    kept.report(where)
    if kept.kinds:
        records[STORE_KINDS] = kept.kinds
    if kind in UNDIRECTED:
        warn(
            f"{where}: {kind}'s graph is undirected; each edge is shown once, as stored, and an answer may walk or "
            "cite it either way"
        )
    return records, raw


# -----------------------------------------------------------------------------
# Microsoft GraphRAG: the output folder's parquet tables


DECODED_RATIO = 20  # text a parquet table may decode to, per byte of the file (GraphRAG's compress a few times)
MIN_DECODED_LIMIT = 64_000_000  # ... and at least this much


def _is_text(kind: object) -> bool:
    import pyarrow as pa

    text: bool = pa.types.is_string(kind) or pa.types.is_large_string(kind)  # pyarrow ships no types
    return text


def decoded_text(table: Any) -> int:
    """The bytes a table's text columns decode to, counted without decoding them (a dictionary's value lengths taken by
    its indices)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    total = 0
    for column in table.columns:
        for chunk in column.chunks:
            if pa.types.is_dictionary(chunk.type) and _is_text(chunk.type.value_type):
                total += pc.sum(pc.take(pc.binary_length(chunk.dictionary), chunk.indices)).as_py() or 0
            elif _is_text(chunk.type):
                total += pc.sum(pc.binary_length(chunk)).as_py() or 0
    return total


def read_graphrag(path: Path, kept: Kept) -> tuple[dict[str, Any], bytes, str]:
    folder = path if path.is_dir() else path.parent
    names = next((pair for pair in GRAPHRAG_FILES if all((folder / f).is_file() for f in pair)), None)
    if names is None:
        raise BenchmarkError(
            f"--graph {display(folder)}: GraphRAG's output folder needs {GRAPHRAG_FILES[0][0]} and "
            f"{GRAPHRAG_FILES[0][1]} "
            f"(or {GRAPHRAG_FILES[1][0]} and {GRAPHRAG_FILES[1][1]}); point --graph at the folder holding them"
        )
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise not_installed(
            f"--graph {display(folder)}: reading GraphRAG's parquet tables", "pyarrow", "graphs"
        ) from None
    tables, raw = [], b""
    for name in names:
        file = folder / name
        data = file.read_bytes()
        raw += data
        try:
            table = pq.read_table(file, read_dictionary=[f.name for f in pq.read_schema(file) if _is_text(f.type)])
        except Exception as e:  # pyarrow raises its own errors for a file it cannot read
            raise BenchmarkError(
                f"{display(file)}: not a parquet table ({str(e).splitlines()[0][:200]}); give GraphRAG's output"
            ) from None
        decoded, limit = decoded_text(table), min(MAX_INPUT_BYTES, max(MIN_DECODED_LIMIT, DECODED_RATIO * len(data)))
        if (
            decoded > limit
        ):  # a few repeated values can decode to gigabytes: what the input cap means, on what is decoded
            raise BenchmarkError(
                f"{display(file)}: its text decodes to {decoded:,} bytes from {len(data):,}, over the {limit:,} this "
                "tool "
                "reads of a table that size; give GraphRAG's own output, or a smaller table"
            )
        tables.append((table.to_pylist(), display(file)))
    (entities, entities_at), (relationships, relationships_at) = tables
    for rows, at in ((entities, entities_at), (relationships, relationships_at)):
        ids = [row.get("human_readable_id") for row in rows]
        if any(i is not None for i in ids) and ids != list(range(len(rows))):
            warn(
                f"{at}: its human_readable_id values are not its rows' positions (row 0 has {ids[0]!r}: an excerpt of "
                "a larger index?); GraphRAG prints them, the graphrag layout here numbers the rows from 0"
            )
    nodes = [_graphrag_entity(row, f"{entities_at} row {k}", kept) for k, row in enumerate(entities)]
    edges = [_graphrag_relationship(row, f"{relationships_at} row {k}", kept) for k, row in enumerate(relationships)]
    files = {"nodes": entities_at, "edges": relationships_at}  # a record per row, in the table's order
    rows = StoreRows("graphrag", lambda kind, k: (files[kind], f"row {k}"))
    return {"nodes": nodes, "edges": edges, STORE_ROWS: rows}, raw, display(folder)


GRAPHRAG_NULL = (
    "nan"  # what GraphRAG's local search prints for a null description: pandas reads it as NaN, and str(NaN)
)


def _graphrag_description(row: dict[str, Any], kept: Kept) -> str | None:
    """A description as GraphRAG's context shows it: a null one (in a column that has it) as 'nan', an empty one not
    at all (None)."""
    if "description" not in row:
        return None
    value = row.pop("description")
    if value is None and not kept.everything:
        return GRAPHRAG_NULL
    if value is not None and not isinstance(value, str):
        kept.not_text += 1
        return str(value) if value else None  # GraphRAG's table: description if description else ""
    return _text(value)


def _graphrag_entity(row: dict[str, Any], where: str, kept: Kept) -> dict[str, Any]:
    row = dict(row)
    given = row.pop("title", None)
    title = _text(given) or (None if given is not None else _text(row.pop("name", None)))
    if title is None:
        said = (
            "no title"
            if given is None
            else f"the title {str(given)[:40]!r}, {type(given).__name__}, not text"
            if not isinstance(given, str)
            else "an empty title"
        )
        raise BenchmarkError(f"{where}: the entity has {said}; give each entity its title as text")
    kind = kept.type_of(row.pop("type", None), title)
    description = _graphrag_description(row, kept)
    return {
        "id": title,
        "name": title,
        "type": kind,
        **kept.fields(row, where, NODE_OWN),
        **({"description": description} if description else {}),
    }


def _graphrag_relationship(row: dict[str, Any], where: str, kept: Kept) -> dict[str, Any]:
    row = dict(row)
    source, target = _text(row.pop("source", None)), _text(row.pop("target", None))
    if source is None or target is None:
        raise BenchmarkError(f"{where}: the relationship has no source or target title; give both")
    relation = _graphrag_description(row, kept) or DEFAULT_RELATION
    if not kept.everything and not row.get(
        "weight"
    ):  # GraphRAG prints no weight of 0 (str(rel.weight if rel.weight else ""))
        row.pop("weight", None)
    return {"source": source, "relation": relation, "target": target, **kept.fields(row, where, EDGE_OWN)}


# -----------------------------------------------------------------------------
# LightRAG: the GraphML file networkx writes


GRAPHML_TYPES: dict[str, Callable[[str], object]] = {
    "boolean": lambda v: v.strip().lower() in ("true", "1"),
    "int": int,
    "long": int,
    "float": float,
    "double": float,
    "string": str,
}


def streamed_graphml(
    raw: bytes, where: str
) -> tuple[list[tuple[str, dict[str, Any]]], list[tuple[str, str, dict[str, Any]]]]:
    """A GraphML file as networkx writes LightRAG's store, read element by element (ElementTree.iterparse, each node
    and edge cleared once read): (node id, attributes) and (source, target, attributes) in the file's order, typed
    and defaulted as its keys declare. networkx's reader builds the whole document first: 737 MB for a 39 MB store
    of 74,133 edges."""
    import xml.etree.ElementTree as ET

    keys: dict[str, tuple[str, Callable[[str], object], str | None]] = {}  # key id -> (attribute name, type, default)
    defaults: dict[str, dict[str, object]] = {"node": {}, "edge": {}}
    nodes, edges, graphs, directed = [], [], 0, []

    def attributes(element: Any, kind: str) -> dict[str, Any]:
        data = dict(defaults[kind])
        for child in element:
            if child.tag.rpartition("}")[2] == "data" and child.get("key") in keys:
                name, convert, _ = keys[child.get("key")]
                try:
                    data[name] = convert(child.text or "")
                except ValueError:
                    shown = (child.text or "")[:40] + ("..." if len(child.text or "") > 40 else "")
                    raise BenchmarkError(
                        f"{where}: {kind} {(element.get('id') or element.get('source') or '')[:80]!r} has {name} "
                        f"{shown!r}, not of its declared type; fix the file"
                    ) from None
        return data

    try:
        for event, element in ET.iterparse(io.BytesIO(raw), events=("start", "end")):
            tag = element.tag.rpartition("}")[2]
            if event == "start":
                if tag == "graph":
                    graphs += 1
                    directed.append(element.get("edgedefault") == "directed")
                continue
            if tag == "key":
                convert: Callable[[str], object] = GRAPHML_TYPES.get(element.get("attr.type", "string"), str)
                default = next((c.text for c in element if c.tag.rpartition("}")[2] == "default"), None)
                keys[element.get("id")] = (element.get("attr.name") or element.get("id"), convert, default)
                if default is not None and element.get("for") in defaults:
                    try:
                        defaults[element.get("for")][keys[element.get("id")][0]] = convert(default)
                    except ValueError:
                        raise BenchmarkError(
                            f"{where}: the key {element.get('id')!r} declares the default {default[:40]!r}, not of its "
                            f"type {element.get('attr.type', 'string')!r}; fix the file"
                        ) from None
            elif tag == "node":
                nodes.append((element.get("id"), attributes(element, "node")))
                element.clear()
            elif tag == "edge":
                edges.append((element.get("source"), element.get("target"), attributes(element, "edge")))
                element.clear()
    except ET.ParseError as e:
        raise BenchmarkError(f"{where}: not GraphML ({e}); fix the file") from None
    if graphs != 1:
        raise BenchmarkError(f"{where}: holds {graphs} graphs; give one")
    if directed[0]:
        warn(
            f'{where}: declares its edges directed (edgedefault="directed"), which LightRAG never writes; read as '
            "LightRAG reads its store, each edge once whichever way it is written"
        )
    return nodes, edges


LIGHTRAG_UNKNOWN = (
    "UNKNOWN"  # LightRAG's entity type when it has none (entity.get("entity_type", "UNKNOWN")), as it sends it
)


def lightrag_order(node_ids: list[str], edges: list[tuple[str, str, dict[str, Any]]]) -> list[int]:
    """The edges (source, target, attributes) in the order LightRAG's local query sends them when every entity is
    selected in the store's order (_find_most_related_edges_from_entities): each entity's edges in networkx's adjacency
    order, each pair once, then ranked by edge degree (the sum of its ends' degrees) and weight (1.0 when it has none),
    highest first, ties in that order."""
    adjacency: dict[str, dict[str, int]] = {v: {} for v in node_ids}  # node -> neighbour -> the edge, first added first
    for k, (source, target, _) in enumerate(edges):
        adjacency.setdefault(source, {}).setdefault(target, k)
        adjacency.setdefault(target, {}).setdefault(source, k)
    degree = {v: len(n) + (v in n) for v, n in adjacency.items()}  # networkx: a self-loop counts twice
    collected, seen = [], set()
    for v, neighbours in adjacency.items():
        for u, k in neighbours.items():
            pair = (v, u) if v <= u else (u, v)
            if pair not in seen:
                seen.add(pair)
                collected.append(k)
    weight = [_lightrag_weight(data.get("weight")) for _, _, data in edges]
    return sorted(collected, key=lambda k: (degree[edges[k][0]] + degree[edges[k][1]], weight[k]), reverse=True)


def _lightrag_weight(value: object) -> float:
    return (
        float(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        else 1.0
    )


def read_lightrag(raw: bytes, where: str, kept: Kept) -> dict[str, Any]:
    node_list, edge_list = streamed_graphml(raw, where)
    nodes = []
    for node_id, data in node_list:
        if not (node_id or "").strip():
            raise BenchmarkError(f"{where}: a node has an empty id (LightRAG's entity name); fix the store")
        kind = _text(data.pop("entity_type", None)) or LIGHTRAG_UNKNOWN
        nodes.append(
            {"id": node_id, "name": node_id, "type": kind, **kept.fields(data, f"{where}: node {node_id!r}", NODE_OWN)}
        )
    declared = {n["id"] for n in nodes}
    implicit = [v for v in dict.fromkeys(end for s, t, _ in edge_list for end in (s, t)) if v not in declared]
    if implicit:  # GraphML lets an edge name a node it never declares; networkx (and so LightRAG) reads it as a node
        warn(
            f"{where}: {len(implicit):,} node(s) only an edge names "
            f"({implicit[0]!r}{', ...' if len(implicit) > 1 else ''}) are read "
            f"as entities of type {LIGHTRAG_UNKNOWN!r} with no description, as LightRAG sends them"
        )
        nodes += [{"id": v, "name": v, "type": LIGHTRAG_UNKNOWN} for v in implicit]
    # a pair given twice is one edge, as networkx's Graph keeps it
    merged: dict[tuple[str, str], tuple[str, str, dict[str, Any]]] = {}
    for source, target, data in edge_list:
        pair = (source, target) if source <= target else (target, source)
        merged[pair] = (*pair, {**merged[pair][2], **data}) if pair in merged else (*pair, data)
    if len(merged) < len(edge_list):
        warn(
            f"{where}: {len(edge_list) - len(merged):,} edge(s) join a pair of entities another edge joins; each pair "
            "is one "
            "relationship, its attributes the later edge's, as LightRAG's networkx graph keeps them"
        )
    edges = list(merged.values())
    records = []
    for k in lightrag_order(
        [n["id"] for n in nodes], edges
    ):  # its ends in order, as LightRAG writes them: tuple(sorted(e))
        source, target, data = edges[k][0], edges[k][1], dict(edges[k][2])
        description = data.pop("description", None)
        keywords = kept.everything and _text(data.get("keywords"))
        # an empty description is one LightRAG prints as "" (none at all it prints as "UNKNOWN": DEFAULT_RELATION)
        relation = _text(description) or keywords or ("" if description == "" else DEFAULT_RELATION)
        records.append(
            {
                "source": source,
                "relation": relation,
                "target": target,
                **kept.fields(data, f"{where}: the edge {source!r} - {target!r}", EDGE_OWN),
            }
        )

    def place(kind: str, k: int) -> tuple[str, str]:  # GraphML names a node by its id, an edge by its ends
        if kind == "nodes":
            return where, f"node {nodes[k]['id']!r}"
        return where, f"edge {records[k]['source']!r} - {records[k]['target']!r}"

    return {"nodes": nodes, "edges": records, STORE_ROWS: StoreRows("lightrag", place)}


# -----------------------------------------------------------------------------
# LlamaIndex: SimplePropertyGraphStore's JSON


def read_llamaindex_json(file: Path) -> tuple[object, bytes]:
    """The store's JSON: a key given twice in one object is refused, as for every JSON input (benchmark.read_json)."""
    return read_json(file, "--graph")


def read_llamaindex(data: Any, where: str, kept: Kept) -> dict[str, Any]:
    if not is_llamaindex_store(data):
        raise BenchmarkError(
            f'{where}: expected LlamaIndex\'s property graph store, {{"nodes": {{...}}, "relations": {{...}}, '
            '"triplets": [...]}, as SimplePropertyGraphStore.persist writes it'
        )
    nodes, chunks = [], set()
    for key, node in data["nodes"].items():
        at = f"{where}: node {key!r}"
        if not isinstance(node, dict):
            raise BenchmarkError(f"{at} is not an object; fix the store")
        if "name" not in node:  # a ChunkNode: the text the triplets came from
            chunks.add(key)
            continue
        name, label, props = node.get("name"), node.get("label") or DEFAULT_TYPE, node.get("properties") or {}
        if not isinstance(name, str) or not isinstance(label, str) or not isinstance(props, dict):
            raise BenchmarkError(f"{at}: expected a string name and label and a map of properties; fix the store")
        if not name.strip() or not key.strip():
            raise BenchmarkError(f"{at}: an entity with an empty name; fix the store")
        shown = key if kept.nothing else name  # a triplet without properties shows the node's id (EntityNode.id)
        nodes.append({"id": key, "name": shown, "type": kept.type_of(label, key), **kept.fields(props, at, NODE_OWN)})
    edges, left_out, unsent = {}, 0, 0
    for key, relation in data["relations"].items():
        at = f"{where}: relation {key!r}"
        if not isinstance(relation, dict) or not all(
            isinstance(relation.get(k), str) for k in ("label", "source_id", "target_id")
        ):
            raise BenchmarkError(f"{at}: expected a label, source_id and target_id; fix the store")
        if relation["source_id"] in chunks or relation["target_id"] in chunks:
            left_out += 1
            continue
        props = relation.get("properties") or {}
        if not isinstance(props, dict):
            raise BenchmarkError(f"{at}: its properties are not a map; fix the store")
        edges[key] = {
            "source": relation["source_id"],
            "relation": relation["label"],
            "target": relation["target_id"],
            **kept.fields(props, at, EDGE_OWN),
        }
    order = _triplet_order(data, where)
    if order is not None:  # LlamaIndex sends its triplets (get_triplets walks them): a relation in none is never sent
        unsent = sum(k not in order for k in edges)
        edges = {k: edges[k] for k in order if k in edges}
    if chunks:
        warn(
            f"{where}: left out {len(chunks):,} chunk node(s) and {left_out:,} relation(s) to them: the source text, "
            "not the graph"
        )
    if unsent:
        warn(f"{where}: left out {unsent:,} relation(s) in no triplet: LlamaIndex sends its triplets only")
    linked = {end for e in edges.values() for end in (e["source"], e["target"])}
    alone = [n["id"] for n in nodes if n["id"] not in linked]
    if alone and not kept.all:  # LlamaIndex's retrievers send triplets: an entity in none is never sent
        warn(
            f"{where}: left out {len(alone):,} entit{'y' if len(alone) == 1 else 'ies'} in no triplet "
            f"({alone[0]!r}{', ...' if len(alone) > 1 else ''}): LlamaIndex sends triplets only; --store-fields all "
            "keeps them"
        )
        nodes = [n for n in nodes if n["id"] in linked]
    keys = list(edges)

    def place(kind: str, k: int) -> tuple[str, str]:  # the store's JSON keys its nodes and relations
        return where, f"node {nodes[k]['id']!r}" if kind == "nodes" else f"relation {keys[k]!r}"

    return {"nodes": nodes, "edges": list(edges.values()), STORE_ROWS: StoreRows("llamaindex", place)}


def _triplet_order(data: dict[str, Any], where: str) -> list[str] | None:
    """The relations' keys in the order of the store's triplets ([subject id, label, object id], each the key
    f"{subject}_{label}_{object}"), or None when the triplets are not such lists (the relations' own order then)."""
    triplets = data["triplets"]
    if not isinstance(triplets, list) or not all(
        isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) for x in t) for t in triplets
    ):
        return None
    keys = list(dict.fromkeys(f"{s}_{label}_{o}" for s, label, o in triplets))
    missing = next((k for k in keys if k not in data["relations"]), None)
    if missing is not None:
        raise BenchmarkError(
            f"{where}: the triplet {missing!r} has no relation of that key; fix the store, or persist it again"
        )
    return keys


def is_llamaindex_store(data: object) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("nodes"), dict)
        and isinstance(data.get("relations"), dict)
        and "triplets" in data
    )
