import { GraphQLError, Kind, type ValueNode } from 'graphql';
import { isoUtc } from '../domain/text-forms.ts';
import { builder } from './builder.ts';

builder.scalarType('DateTime', {
  description: 'ISO 8601 timestamp; output is always UTC with milliseconds and Z',
  serialize: (v) => isoUtc(v as Date | string)!,
  parseValue: (v) => {
    const d = typeof v === 'string' ? new Date(v) : null;
    if (!d || Number.isNaN(d.getTime())) throw new GraphQLError('DateTime must be an ISO 8601 string');
    // PostgreSQL has no year 0 and Prisma can't send negative years: outside this range a filter
    // bound would fail in the database (a 500) instead of here (the client's 4xx).
    const year = d.getUTCFullYear();
    if (year < 1 || year > 9999) throw new GraphQLError('DateTime must be between 0001-01-01 and 9999-12-31 (UTC)');
    return d;
  },
});

function literal(ast: ValueNode): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
      return Number.parseInt(ast.value, 10);
    case Kind.FLOAT:
      return Number.parseFloat(ast.value);
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((f) => [f.name.value, literal(f.value)]));
    case Kind.LIST:
      return ast.values.map(literal);
    case Kind.NULL:
      return null;
    default:
      throw new GraphQLError('Variables are not supported inside JSON literals');
  }
}

builder.scalarType('JSON', {
  description: 'Arbitrary JSON value',
  serialize: (v) => v,
  parseValue: (v) => v,
  parseLiteral: literal,
});
