/**
 * Sizes a reader can hold in mind: every source file under 500 lines and every function
 * under 80 (a screen), measured by test/code-size.ts; and private state written one way.
 */
import { describe, expect, it } from 'vitest';
import {
  allKeywordPrivates,
  functionSizes,
  keywordPrivates,
  longFiles,
  longFunctions,
  MAX_FILE_LINES,
  MAX_FUNCTION_LINES,
} from './code-size.js';
import { ROOT } from './harness.js';

describe('the size of the code', () => {
  it(`no source file outside the tests has ${MAX_FILE_LINES} lines or more`, () => {
    expect(longFiles(ROOT)).toEqual([]);
  });

  it(`no function outside the tests has ${MAX_FUNCTION_LINES} lines or more`, () => {
    expect(longFunctions(ROOT)).toEqual([]);
  });

  it('measures a function from its first line to its last, nested ones on their own too', () => {
    const text = [
      'export function outer(): number {',
      '  const inner = (): number => {',
      '    return 1;',
      '  };',
      '  return inner();',
      '}',
      'class A { m(): void {} }',
    ].join('\n');
    expect(functionSizes('x.ts', text)).toEqual([
      { where: 'x.ts:1 outer', lines: 6 },
      { where: 'x.ts:2 inner', lines: 3 },
      { where: 'x.ts:7 m', lines: 1 },
    ]);
  });

  it('private state is #name: the `private` keyword marks only constructors (docs/development.md)', () => {
    expect(allKeywordPrivates(ROOT)).toEqual([]);
  });

  it('finds a `private` field, method or parameter property, and lets a private constructor be', () => {
    const text = [
      'class A {',
      '  private x = 1;',
      '  #y = 2;',
      '  private m(): void {}',
      '  private constructor(private readonly z: number) {}',
      '}',
    ].join('\n');
    expect(keywordPrivates('x.ts', text)).toEqual(['x.ts:2 x', 'x.ts:4 m', 'x.ts:5 z']);
  });
});
