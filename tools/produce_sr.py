#!/usr/bin/env python3
"""Produce records framed by Confluent's serializers, for end-to-end tests.

Each line of a JSON-lines file becomes one record value, serialized by
confluent_kafka's AvroSerializer or ProtobufSerializer against a schema
registry (tools/registry.sh), which registers the schema (and, for Protobuf,
the imported files as references) on the first record. Values carry
Confluent's wire format: magic byte 0, the 4-byte big-endian schema id, then
(Protobuf only) the zig-zag varint message indexes, then the payload.

  produce_sr.py --bootstrap B --topic T --registry URL [--key K --secret S] \\
      [--registry-ca CA.pem] \\
      avro --schema-file x.avsc --records recs.jsonl [--subject S]
  produce_sr.py ... protobuf --desc-file x.desc --message pkg.Msg \\
      --records recs.jsonl [--subject S] [--register-known-types]
  produce_sr.py ... raw --hex 00deadbeef [--hex ...] [--count N]

--desc-file is a FileDescriptorSet (protoc --include_imports
--descriptor_set_out, or protodesc in Go); files it imports from
google/protobuf/ may be left out of it. The message class is built from it at
run time. Records are parsed with json_format.ParseDict (field names as in
the .proto or lowerCamelCase; Timestamps as RFC 3339 strings, bytes as
base64). For Avro, records are plain JSON objects as fastavro takes them
(bytes fields as strings, logical timestamps as integers).

--record-key-field F takes each record's key from field F (UTF-8 of its JSON
string or number); records have no key otherwise. --partition N sends all to
one partition. The schema subject defaults to TOPIC-value (TopicNameStrategy).

On success prints one JSON object on stdout:
  {"topic": T, "count": N, "schema_ids": [...], "first_value_hex": "..."}
"""

import argparse
import json
import sys

from confluent_kafka import Producer
from confluent_kafka.serialization import MessageField, SerializationContext


def registry_client(args):
    from confluent_kafka.schema_registry import SchemaRegistryClient

    conf = {"url": args.registry}
    if args.registry_ca:
        conf["ssl.ca.location"] = args.registry_ca
    if args.key:
        conf["basic.auth.user.info"] = f"{args.key}:{args.secret or ''}"
    return SchemaRegistryClient(conf)


def read_records(path):
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{n}: {e}")


def subject_strategy(subject):
    if not subject:
        return {}
    return {"subject.name.strategy": lambda ctx, record_name: subject}


def avro_serializer(args):
    from confluent_kafka.schema_registry.avro import AvroSerializer

    with open(args.schema_file, encoding="utf-8") as f:
        schema_str = f.read()
    conf = {"auto.register.schemas": True, **subject_strategy(args.subject)}
    ser = AvroSerializer(registry_client(args), schema_str, conf=conf)
    return ser, lambda obj: obj


def load_message_class(desc_file, message):
    """The class of MESSAGE from a FileDescriptorSet, in a pool of its own."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    fds = descriptor_pb2.FileDescriptorSet()
    with open(desc_file, "rb") as f:
        fds.ParseFromString(f.read())
    files = {fd.name: fd for fd in fds.file}
    pool = descriptor_pool.DescriptorPool()
    added = set()

    def add(name):
        if name in added:
            return
        fd = files.get(name)
        if fd is None:
            if not name.startswith("google/protobuf/"):
                sys.exit(f"{desc_file}: imported file {name} is not in the set (use --include_imports)")
            fd = well_known_file(name)
        for dep in fd.dependency:
            add(dep)
        pool.Add(fd)
        added.add(name)

    for name in files:
        add(name)
    try:
        desc = pool.FindMessageTypeByName(message)
    except KeyError:
        sys.exit(f"{desc_file}: no message {message}")
    return message_factory.GetMessageClass(desc)


def well_known_file(name):
    """FileDescriptorProto of a google/protobuf/*.proto the protobuf package ships."""
    import importlib

    from google.protobuf import descriptor_pb2, descriptor_pool

    mod = "google.protobuf." + name[len("google/protobuf/"):-len(".proto")].replace("/", ".") + "_pb2"
    try:
        importlib.import_module(mod)
        fd = descriptor_pool.Default().FindFileByName(name)
    except (ImportError, KeyError):
        sys.exit(f"imported file {name} is neither in the descriptor set nor a well-known type")
    proto = descriptor_pb2.FileDescriptorProto()
    fd.CopyToProto(proto)
    return proto


def protobuf_serializer(args):
    from google.protobuf import json_format
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer

    cls = load_message_class(args.desc_file, args.message)
    conf = {
        "auto.register.schemas": True,
        # Message indexes as zig-zag varints (the current framing); the old
        # unsigned framing is refused by 2.x anyway.
        "use.deprecated.format": False,
        # By default imports of google/protobuf/*.proto are not registered
        # as references; --register-known-types registers them too.
        "skip.known.types": not args.register_known_types,
        **subject_strategy(args.subject),
    }
    ser = ProtobufSerializer(cls, registry_client(args), conf=conf)
    return ser, lambda obj: json_format.ParseDict(obj, cls())


def record_key(obj, field):
    if not field:
        return None
    v = obj.get(field)
    if v is None:
        return None
    return (v if isinstance(v, str) else json.dumps(v)).encode()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--registry", help="schema registry URL (not needed for raw)")
    p.add_argument("--key", help="registry API key (basic-auth user)")
    p.add_argument("--secret", help="registry API secret (basic-auth password)")
    p.add_argument("--registry-ca", help="PEM CA file that signed an https registry's certificate")
    p.add_argument("--partition", type=int)
    p.add_argument("--record-key-field")
    sub = p.add_subparsers(dest="format", required=True)
    a = sub.add_parser("avro")
    a.add_argument("--schema-file", required=True)
    a.add_argument("--records", required=True)
    a.add_argument("--subject")
    pb = sub.add_parser("protobuf")
    pb.add_argument("--desc-file", required=True)
    pb.add_argument("--message", required=True, help="full name, e.g. pkg.Msg")
    pb.add_argument("--records", required=True)
    pb.add_argument("--subject")
    pb.add_argument("--register-known-types", action="store_true")
    r = sub.add_parser("raw", help="produce the given bytes as values, unframed")
    r.add_argument("--hex", action="append", required=True, help="one value in hex; repeatable")
    r.add_argument("--count", type=int, default=1, help="produce the values this many times")
    args = p.parse_args()

    values = []  # (key, value bytes)
    if args.format == "raw":
        for _ in range(args.count):
            values += [(None, bytes.fromhex(h)) for h in args.hex]
    else:
        if not args.registry:
            p.error("--registry is needed for avro and protobuf")
        ser, convert = (avro_serializer if args.format == "avro" else protobuf_serializer)(args)
        ctx = SerializationContext(args.topic, MessageField.VALUE)
        for obj in read_records(args.records):
            values.append((record_key(obj, args.record_key_field), ser(convert(obj), ctx)))

    producer = Producer({"bootstrap.servers": args.bootstrap, "acks": "all", "linger.ms": 5})
    errors = []

    def delivered(err, _msg):
        if err is not None:
            errors.append(str(err))

    for key, value in values:
        kw = {"key": key, "value": value, "on_delivery": delivered}
        if args.partition is not None:
            kw["partition"] = args.partition
        while True:
            try:
                producer.produce(args.topic, **kw)
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
    left = producer.flush(60)
    if left or errors:
        sys.exit(f"produce failed: {left} undelivered, errors: {errors[:5]}")

    ids = sorted({int.from_bytes(v[1:5], "big") for _, v in values if len(v) >= 5 and v[0] == 0})
    print(json.dumps({
        "topic": args.topic,
        "count": len(values),
        "schema_ids": ids if args.format != "raw" else [],
        "first_value_hex": values[0][1].hex() if values else "",
    }))


if __name__ == "__main__":
    main()
