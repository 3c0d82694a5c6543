// The DnsPacket codec against protobuf's wire format, byte by byte: what a conforming encoder may
// send (multi-byte lengths, unknown fields, a repeated field) is read as protobuf reads it, and
// what no encoder sends is refused with the reason.
import { expect, it } from 'vitest';
import { decodeDnsPacket, encodeDnsPacket } from '../../src/server/grpc-codec.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/ /g, ''), 'hex');

it('encodes field 1 with its length as a varint', () => {
  expect(encodeDnsPacket(hex('01 02 03')).toString('hex')).toBe('0a03010203');
  // 300 = 0b10_0101100: low 7 bits with the continuation bit, then 2.
  const big = Buffer.alloc(300, 7);
  expect(encodeDnsPacket(big).subarray(0, 3).toString('hex')).toBe('0aac02');
  expect(encodeDnsPacket(big)).toHaveLength(303);
  // 65,535 takes three length bytes: the 4 bytes of overhead CoreDNS allows for.
  expect(encodeDnsPacket(Buffer.alloc(65_535)).subarray(0, 4).toString('hex')).toBe('0affff03');
  // proto3 leaves a default (empty) value out.
  expect(encodeDnsPacket(Buffer.alloc(0))).toHaveLength(0);
});

it('decodes what it encodes', () => {
  for (const n of [0, 1, 127, 128, 300, 16_383, 16_384, 65_535]) {
    const msg = Buffer.alloc(n, n % 251);
    const got = decodeDnsPacket(encodeDnsPacket(msg));
    expect('msg' in got && got.msg.equals(msg)).toBe(true);
  }
});

it.each([
  ['the empty message: an empty msg', '', ''],
  ['a non-minimal length varint', '0a 83 00 01 02 03', '010203'],
  ['unknown varint, fixed64, bytes and fixed32 fields around it', '10 96 01 19 0102030405060708 0a 02 aabb 22 01 ff 2d 01020304', 'aabb'],
  ['the last of two msg fields', '0a 01 11 0a 02 2233', '2233'],
])('reads %s', (_what, wire, msg) => {
  expect(decodeDnsPacket(hex(wire))).toEqual({ msg: hex(msg) });
});

it.each([
  ['a length past the end', '0a 05 01', 'field 1 claims 5 bytes, 1 follow'],
  ['a truncated length', '0a 80', 'truncated length of field 1'],
  ['a truncated key', '80', 'truncated field key at byte 0'],
  ['field 1 as a varint', '08 01', 'field 1 (msg) has wire type 0, not 2 (bytes)'],
  ['field number 0', '02 00', 'invalid field number 0'],
  ['a group', '1b 1c', 'unsupported wire type 3 of field 3'],
  ['wire type 7', '17', 'unsupported wire type 7 of field 2'],
  ['a truncated fixed64', '19 0102', 'truncated fixed-size value of field 3'],
  ['a varint of 11 bytes', '10 ffffffffffffffffffff01', 'truncated varint of field 2'],
])('refuses %s', (_what, wire, error) => {
  expect(decodeDnsPacket(hex(wire))).toEqual({ error });
});

it('refuses a length of 2^63 (past the precision of a number) as longer than what follows', () => {
  expect(decodeDnsPacket(hex('12 ffffffffffffffff7f 00'))).toEqual({ error: expect.stringMatching(/^field 2 claims \d+ bytes, 1 follow$/) });
});
