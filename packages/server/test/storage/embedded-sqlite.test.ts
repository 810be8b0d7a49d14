import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { embeddedSqliteDriver, openEmbeddedSqlite, resultCodeName, type EmbeddedSqlite } from '../../src/storage/kysely/embedded-sqlite.js';

/** A connection to a new file in a folder removed when the test ends. */
function fileDatabase(): { path: string; db: EmbeddedSqlite } {
  const dir = mkdtempSync(join(tmpdir(), 'connect-embedded-'));
  const path = join(dir, 'connect.db');
  const db = openEmbeddedSqlite(path);
  onTestFinished(() => {
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { path, db };
}

describe('the embedded SQLite driver', () => {
  it('counts every call that reaches the connection, and nothing else', async () => {
    const { path, db } = fileDatabase();
    const counts = [db.operations];
    const step = (work: () => unknown) => {
      work();
      counts.push(db.operations);
    };
    step(() => db.exec('create table t (n integer)'));
    const insert = db.prepare('insert into t (n) values (?)');
    counts.push(db.operations);
    step(() => insert.run([1]));
    const select = db.prepare('select n from t');
    counts.push(db.operations);
    step(() => select.get());
    step(() => select.all());
    step(() => [...select.iterate()]);
    // Reading its state is not a call.
    step(() => [db.open, db.inTransaction, db.driver]);
    await db.backup(join(path, '..', 'copy.db'), { pagesPerStep: 100, progress: () => {} });
    counts.push(db.operations);
    step(() => db.close());
    expect(counts).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 8, 9, 10]);
  });

  it('is node:sqlite where Node no longer calls it experimental (24.15 on, 26 on), better-sqlite3 before', () => {
    expect(embeddedSqliteDriver('20.20.2')).toBe('better-sqlite3');
    expect(embeddedSqliteDriver('22.23.3')).toBe('better-sqlite3');
    expect(embeddedSqliteDriver('24.0.0')).toBe('better-sqlite3');
    expect(embeddedSqliteDriver('24.14.1')).toBe('better-sqlite3');
    expect(embeddedSqliteDriver('24.15.0')).toBe('node:sqlite');
    // From 24.19 on, better-sqlite3 built for this Node.js aborts the process.
    expect(embeddedSqliteDriver('24.19.0')).toBe('node:sqlite');
    expect(embeddedSqliteDriver('24.21.0')).toBe('node:sqlite');
    expect(embeddedSqliteDriver('25.0.0')).toBe('better-sqlite3');
    expect(embeddedSqliteDriver('25.9.0')).toBe('better-sqlite3');
    expect(embeddedSqliteDriver('26.0.0')).toBe('node:sqlite');
    expect(embeddedSqliteDriver('26.10.0')).toBe('node:sqlite');
  });

  it(`on this Node.js (${process.versions.node}) opens the file with ${embeddedSqliteDriver()}, and loads better-sqlite3 only when it is that driver`, () => {
    const { db } = fileDatabase();
    expect(db.driver).toBe(embeddedSqliteDriver());
    const loaded = Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes('/better-sqlite3/'));
    expect(loaded).toBe(db.driver === 'better-sqlite3');
  });

  it('binds positional parameters from an array, tells readers from writers, and runs, gets, lists and iterates', () => {
    const { db } = fileDatabase();
    db.exec('create table t (id integer primary key, name text not null, n integer)');
    const insert = db.prepare('insert into t (name, n) values (?, ?)');
    expect(insert.reader).toBe(false);
    expect(insert.run(['a', 1])).toMatchObject({ changes: 1 });
    expect(Number(insert.run(['b', null]).lastInsertRowid)).toBe(2);
    const returning = db.prepare('insert into t (name, n) values (?, ?) returning id, name');
    expect(returning.reader).toBe(true);
    expect(returning.all(['c', 3])).toEqual([{ id: 3, name: 'c' }]);
    const select = db.prepare('select name, n from t where id >= ? order by id');
    expect(select.reader).toBe(true);
    expect(select.get([2])).toEqual({ name: 'b', n: null });
    expect(select.all([1])).toEqual([
      { name: 'a', n: 1 },
      { name: 'b', n: null },
      { name: 'c', n: 3 },
    ]);
    expect([...select.iterate([2])]).toEqual([
      { name: 'b', n: null },
      { name: 'c', n: 3 },
    ]);
    expect(db.prepare('select count(*) as n from t').get()).toEqual({ n: 3 });
    expect(db.prepare('update t set n = 0').run()).toMatchObject({ changes: 3 });
  });

  it('binds undefined as null and refuses booleans, objects and dates, writing nothing', () => {
    const { db } = fileDatabase();
    db.exec('create table t (a text, b integer)');
    const insert = db.prepare('insert into t (a, b) values (?, ?)');
    insert.run([undefined, 1]);
    expect(db.prepare('select a, b from t').all()).toEqual([{ a: null, b: 1 }]);
    for (const value of [true, { b: 2 }, new Date(0)]) {
      expect(() => insert.run([value, 7])).toThrow(TypeError);
    }
    expect(db.prepare('select count(*) as n from t').get()).toEqual({ n: 1 });
  });

  it('waits 5 seconds for a lock by default, and closes once however often it is told', () => {
    const { db } = fileDatabase();
    expect(db.prepare('pragma busy_timeout').get()).toEqual({ timeout: 5000 });
    db.close();
    db.close();
    expect(db.open).toBe(false);
  });

  it('says whether a transaction is open, and whether the connection is', () => {
    const { db } = fileDatabase();
    expect(db.inTransaction).toBe(false);
    db.exec('begin immediate');
    expect(db.inTransaction).toBe(true);
    db.exec('rollback');
    expect(db.inTransaction).toBe(false);
    expect(db.open).toBe(true);
    db.close();
    expect(db.open).toBe(false);
    expect(db.inTransaction).toBe(false);
  });

  it("names SQLite's result code in the error's code, as the storage tells them apart", () => {
    const { path, db } = fileDatabase();
    db.exec('create table t (id text primary key, other text unique, n integer not null)');
    db.exec("create trigger refuse before delete on t begin select raise(abort, 'refused'); end");
    db.prepare('insert into t values (?, ?, ?)').run(['1', 'x', 1]);
    const failure = (work: () => unknown) => {
      try {
        work();
      } catch (error) {
        return error as { code?: unknown; message?: unknown };
      }
      throw new Error('no error');
    };
    expect(failure(() => db.prepare('insert into t values (?, ?, ?)').run(['1', 'y', 1]))).toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    expect(failure(() => db.prepare('insert into t values (?, ?, ?)').run(['2', 'x', 1]))).toMatchObject({ code: 'SQLITE_CONSTRAINT_UNIQUE' });
    expect(failure(() => db.prepare('insert into t values (?, ?, ?)').run(['3', 'z', null]))).toMatchObject({ code: 'SQLITE_CONSTRAINT_NOTNULL' });
    expect(failure(() => db.exec('delete from t'))).toMatchObject({ code: 'SQLITE_CONSTRAINT_TRIGGER', message: 'refused' });
    expect(failure(() => db.prepare('selec 1'))).toMatchObject({ code: 'SQLITE_ERROR' });

    const reader = openEmbeddedSqlite(path, { readonly: true });
    onTestFinished(() => reader.close());
    expect(reader.prepare('select count(*) as n from t').get()).toEqual({ n: 1 });
    expect(failure(() => reader.exec("insert into t values ('4', 'w', 1)"))).toMatchObject({ code: 'SQLITE_READONLY' });

    // Another connection holds the write lock, and this one does not wait.
    const other = openEmbeddedSqlite(path);
    onTestFinished(() => other.close());
    other.exec('pragma busy_timeout = 0');
    db.exec('begin immediate');
    expect(failure(() => other.exec('begin immediate'))).toMatchObject({ code: 'SQLITE_BUSY' });
    db.exec('rollback');
  });

  it('names extended result codes it tells apart, and others by their primary code', () => {
    expect(resultCodeName(5)).toBe('SQLITE_BUSY');
    expect(resultCodeName(517)).toBe('SQLITE_BUSY_SNAPSHOT');
    expect(resultCodeName(1555)).toBe('SQLITE_CONSTRAINT_PRIMARYKEY');
    expect(resultCodeName(2067)).toBe('SQLITE_CONSTRAINT_UNIQUE');
    expect(resultCodeName(1811)).toBe('SQLITE_CONSTRAINT_TRIGGER');
    // SQLITE_IOERR_SHORT_READ (10 | 2 << 8) is not told apart: its primary code names it.
    expect(resultCodeName(522)).toBe('SQLITE_IOERR');
    expect(resultCodeName(99)).toBe('SQLITE_ERROR_99');
  });
});
