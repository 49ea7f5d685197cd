import { describe, expect, it } from 'vitest';
import { hybridWindows } from '../../src/engine/elasticsearch/queries/hybrid-windows.ts';
import { carriedPlan } from '../../src/engine/elasticsearch/queries/query-terms.ts';
import { ENTITY_TIER, withEntities } from '../../src/engine/elasticsearch/queries/entity-query.ts';
import { FLOOR_BAND, fuseHybrid } from '../../src/query/fusion.ts';
import { queryEntities } from '../../src/query/entities.ts';
import {
  analyzeIn,
  analyzeQuery,
  detectLanguage,
  detectorFootprint,
  documentLanguage,
} from '../../src/text/languages.ts';

const open = { lexicalWeight: 0.5, similarityFloor: null, semanticEvidence: true, lexicalFloor: 0 };

describe('fusion keeps lexical evidence', () => {
  it('a rare term matching two posts counts for both: the weaker lexical hit beats a pure near-miss', () => {
    // BM25 found only a and b (the window holds every match: floor 0); c is a closer neighbour than b.
    const fused = fuseHybrid(
      [
        { id: 'a', score: 9, tier: 0 },
        { id: 'b', score: 6, tier: 0 },
      ],
      [
        { id: 'c', score: 0.9, cosine: 0.8 },
        { id: 'a', score: 0.85, cosine: 0.7 },
        { id: 'b', score: 0.7, cosine: 0.4 },
        { id: 'd', score: 0.6, cosine: 0.2 },
      ],
      open,
    );
    expect(fused.map((f) => f.id).slice(0, 3)).toEqual(['a', 'c', 'b']);
    expect(fused.find((f) => f.id === 'b')!.lexical).toBeCloseTo(6 / 9, 12);
  });

  it('with a full window, normalizes against the best document the window did not retrieve', () => {
    const fused = fuseHybrid(
      [
        { id: 'a', score: 10, tier: 0 },
        { id: 'b', score: 4, tier: 0 },
      ],
      [],
      { ...open, lexicalFloor: 2 },
    );
    expect(fused.map((f) => f.lexical)).toEqual([1, 0.25]);
  });

  it('ranks posts carrying more of the query entities first, whatever their other scores', () => {
    const fused = fuseHybrid(
      [
        { id: 'plain', score: 30, tier: 0 },
        { id: 'tagged', score: 2, tier: 1 },
      ],
      [
        { id: 'plain', score: 0.95, cosine: 0.9 },
        { id: 'tagged', score: 0.6, cosine: 0.2 },
      ],
      open,
    );
    expect(fused.map((f) => f.id)).toEqual(['tagged', 'plain']);
  });

  it('drops neighbours below the similarity floor, and all of them when the model cannot read the query', () => {
    const lexical = [{ id: 'a', score: 3, tier: 0 }];
    const semantic = [
      { id: 'n1', score: 0.8, cosine: 0.6 },
      { id: 'n2', score: 0.6, cosine: 0.2 },
      { id: 'a', score: 0.55, cosine: 0.1 },
    ];
    expect(
      fuseHybrid(lexical, semantic, { ...open, similarityFloor: 0.3 })
        .map((f) => f.id)
        .sort(),
    ).toEqual(['a', 'n1']);
    expect(fuseHybrid(lexical, semantic, { ...open, semanticEvidence: false }).map((f) => f.id)).toEqual(['a']);
    // A nonsense query: nothing lexical, every neighbour far away.
    expect(fuseHybrid([], semantic.slice(1), { ...open, similarityFloor: 0.3 })).toEqual([]);
  });

  it('lets a neighbour fade in above the floor, so one crossing it on a hair enters at the bottom', () => {
    expect(FLOOR_BAND).toBe(0.05);
    const lexical = [
      { id: 'a', score: 3, tier: 0 },
      { id: 'b', score: 1, tier: 0 },
    ];
    const fusedWith = (cosine: number) =>
      fuseHybrid(
        lexical,
        [
          { id: 'n1', score: 0.9, cosine: 0.8 },
          { id: 'edge', score: (1 + cosine) / 2, cosine },
          { id: 'far', score: 0.4, cosine: -0.2 },
        ],
        { ...open, similarityFloor: 0.3 },
      );
    // Just above the floor: last, with a score of almost nothing; just under it: gone. Nothing else moves.
    const above = fusedWith(0.301);
    const under = fusedWith(0.299);
    expect(above.map((f) => f.id)).toEqual(['a', 'n1', 'b', 'edge']);
    expect(above.at(-1)!.score).toBeLessThan(0.01);
    expect(under.map((f) => f.id)).toEqual(['a', 'n1', 'b']);
    // Past the band, a neighbour's whole semantic share counts, as without a floor.
    const inside = fusedWith(0.4).find((f) => f.id === 'edge')!;
    expect(inside.score).toBeCloseTo(0.5 * inside.semantic!, 12);
    // Ranked by neighbours alone (semantic mode), the order is the similarity's.
    const semanticOnly = fuseHybrid(
      [],
      [0.9, 0.66, 0.655, 0.652].map((score, i) => ({ id: `s${i}`, score, cosine: 2 * score - 1 })),
      { ...open, lexicalWeight: 0, similarityFloor: 0.3 },
    );
    expect(semanticOnly.map((f) => f.id)).toEqual(['s0', 's1', 's2', 's3']);
  });

  it('reads entity tiers and text scores from engine hits, and the floor from the hit past the window', () => {
    const windows = hybridWindows({ mode: 'hybrid', window: 2, similarityFloor: 0.3, semanticReadable: true });
    const fused = windows.fuse(
      [
        { _id: 't', _score: ENTITY_TIER + 1, matched_queries: ['entity:0'] },
        { _id: 'x', _score: 8 },
        { _id: 'past', _score: 4 },
      ],
      [
        { _id: 'near', _score: 0.9 },
        { _id: 'far', _score: 0.6 },
      ],
    );
    // x (best text, 0.5 · 1) ties with near (best neighbour, 0.5 · 1): the ID breaks it; far is under the floor.
    expect(fused.map((f) => [f.id, f.tier])).toEqual([
      ['t', 1],
      ['near', 0],
      ['x', 0],
    ]);
    // Text scores 1 and 8 against the floor min(4, 1) = 1: x is the best text match.
    expect(fused.find((f) => f.id === 'x')!.lexical).toBe(1);
    expect(
      windows.shownNeighbours([
        { _id: 'near', _score: 0.9 },
        { _id: 'far', _score: 0.6 },
      ]),
    ).toEqual(['near']);
  });

  it('answers a query no post has a word of under the unmatched floor, never below the ordinary one, and pages carry it', () => {
    // kNN scores (1 + cos) / 2: cosines 0.8, 0.5 and 0.35.
    const hits = [
      { _id: 'near', _score: 0.9 },
      { _id: 'mid', _score: 0.75 },
      { _id: 'far', _score: 0.675 },
    ];
    const shown = (settings: { unmatchedFloor?: number | null; unmatched?: boolean; similarityFloor?: number }) =>
      hybridWindows({ mode: 'hybrid', window: 10, similarityFloor: 0.3, semanticReadable: true, ...settings })
        .shownNeighbours(hits)
        .join(' ');
    expect(shown({ unmatchedFloor: 0.6, unmatched: true })).toBe('near');
    expect(shown({ unmatchedFloor: 0.6, unmatched: false })).toBe('near mid far');
    expect(shown({ unmatched: true })).toBe('near mid far');
    expect(shown({ unmatchedFloor: 0.2, unmatched: true, similarityFloor: 0.4 })).toBe('near mid');
    expect(shown({ unmatchedFloor: null, unmatched: true })).toBe('near mid far');
    // The fusion drops what the window does not show.
    const fused = hybridWindows({
      mode: 'hybrid',
      window: 10,
      similarityFloor: 0.3,
      unmatchedFloor: 0.6,
      unmatched: true,
      semanticReadable: true,
    }).fuse([], hits);
    expect(fused.map((f) => f.id)).toEqual(['near']);
    // A later page's plan, from its cursor, is unmatched as the first page's was.
    expect(carriedPlan('zxqv wplkj', { unmatched: true }).unmatched).toBe(true);
    expect(carriedPlan('sourdough', {}).unmatched).toBeUndefined();
  });

  it("answers a question's vector read as a sentence under the sentence floor, and the unmatched floor still above it", () => {
    // kNN scores (1 + cos) / 2: cosines 0.8, 0.556 and 0.5.
    const hits = [
      { _id: 'near', _score: 0.9 },
      { _id: 'edge', _score: 0.778 },
      { _id: 'far', _score: 0.75 },
    ];
    const shown = (settings: { sentence?: boolean; sentenceFloor?: number | null; unmatched?: boolean }) =>
      hybridWindows({
        mode: 'hybrid',
        window: 10,
        similarityFloor: 0.55,
        unmatchedFloor: 0.7,
        semanticReadable: true,
        ...settings,
      })
        .shownNeighbours(hits)
        .join(' ');
    expect(shown({})).toBe('near edge');
    expect(shown({ sentence: true, sentenceFloor: 0.56 })).toBe('near');
    // A vector the model read as any query keeps the ordinary floor; no sentence floor: the ordinary one.
    expect(shown({ sentence: false, sentenceFloor: 0.56 })).toBe('near edge');
    expect(shown({ sentence: true })).toBe('near edge');
    expect(shown({ sentence: true, sentenceFloor: null })).toBe('near edge far');
    expect(shown({ sentence: true, sentenceFloor: 0.56, unmatched: true })).toBe('near');
  });
});

describe('query entities', () => {
  it('finds hashtags, handles and quoted phrases, lowercased and deduplicated', () => {
    expect(queryEntities('#Ad skincare for acne with @Maya.Carter and "double cleansing" #ad')).toEqual([
      { kind: 'hashtag', value: 'ad' },
      { kind: 'handle', value: 'maya.carter' },
      { kind: 'phrase', value: 'double cleansing' },
    ]);
  });

  it('takes a one-word query as a bare hashtag, and ignores e-mail addresses, trailing periods and empty quotes', () => {
    expect(queryEntities('  debtpayoff ')).toEqual([{ kind: 'hashtag', value: 'debtpayoff' }]);
    expect(queryEntities('mail me at me@example.com')).toEqual([]);
    expect(queryEntities('thanks @glow.lab.')).toEqual([{ kind: 'handle', value: 'glow.lab' }]);
    expect(queryEntities('"  " skincare routine')).toEqual([]);
  });

  it('lets entities widen the text match and lift their carriers by a tier each', () => {
    const match = { match_all: {} };
    const filter = [{ term: { servable: true } }];
    expect(withEntities(match, filter, [])).toEqual({ bool: { filter, must: [match] } });
    const query = withEntities(match, filter, [{ kind: 'hashtag', value: 'ad' }]) as {
      bool: { should: unknown[]; minimum_should_match: number };
    };
    expect(query.bool.minimum_should_match).toBe(1);
    expect(query.bool.should[1]).toEqual({
      constant_score: { filter: { term: { hashtags: 'ad' } }, boost: ENTITY_TIER, _name: 'entity:0' },
    });
  });
});

describe('per-language analysis', () => {
  it('stems each language with its own stemmer, so inflections meet', () => {
    expect(analyzeIn('descuentos', 'es')).toBe(analyzeIn('descuento', 'es'));
    expect(analyzeIn('Rabatte', 'de')).toBe(analyzeIn('Rabatt', 'de'));
    expect(analyzeIn('conseils', 'fr')).toBe(analyzeIn('conseil', 'fr'));
    expect(analyzeIn('consigli', 'it')).toBe(analyzeIn('consiglio', 'it'));
    expect(analyzeIn('dicas', 'pt')).toBe(analyzeIn('dica', 'pt'));
    // English as before: stop words dropped, Porter2.
    expect(analyzeIn('The running routines', 'en')).toBe('run routin');
  });

  it('segments Japanese into words the engine keeps whole', () => {
    const tokens = analyzeIn('今日は自炊を紹介します', 'ja').split(' ');
    expect(tokens).toContain(analyzeIn('自炊', 'ja'));
    // A Latin word written into Japanese stays a word of a query.
    expect(analyzeQuery('DIYの始め方').content.split(' ')).toEqual(expect.arrayContaining(['diy', '始め', '方']));
    expect(tokens.every((t) => /^[a-z0-9]+$/.test(t))).toBe(true);
  });

  it('uses the declared language, detects it when absent, and knows when the model cannot read a query', () => {
    expect(documentLanguage('pt-BR', 'whatever the text says')).toBe('pt');
    expect(
      documentLanguage(null, 'Heute zeige ich euch, wie ich das Serum im Alltag nutze. Alles rund um Hautpflege.'),
    ).toBe('de');
    expect(detectLanguage('スキンケアのルーティン')).toEqual({ language: 'ja', confident: true });
    expect(analyzeQuery('night-time skincare routine with a discount code').semanticReadable).toBe(true);
    expect(analyzeQuery('dicas de finanças pessoais').semanticReadable).toBe(false);
    // One or two words: the language is unknown whatever the detector claims ("serum routine" comes
    // out surely French): every stemmed language's stems join, and the model's neighbours count.
    for (const query of ['serum routine', 'skincare', 'finanças pessoais'])
      expect(analyzeQuery(query).semanticReadable).toBe(true);
    expect(analyzeQuery('Küche').stemmed.split(' ')).toEqual(expect.arrayContaining([analyzeIn('Küchen', 'de')]));
    // English stems always take part: a short English query detected as another language still matches.
    expect(analyzeQuery('retinol for beginners').stemmed.split(' ')).toEqual(
      expect.arrayContaining(['retinol', 'beginn']),
    );
  });

  it('takes a verdict of another language only when the query shows it, by an accent or a function word', () => {
    // eld calls each of these surely French, Spanish or Italian: English words of its n-grams.
    for (const query of [
      'skin barrier repair routine',
      'solo travel tips',
      'gentle parenting scripts',
      'air fryer recipes',
    ]) {
      const analysis = analyzeQuery(query);
      expect(analysis.semanticReadable, query).toBe(true);
      // Every stemmed language's stems join, English's among them.
      expect(analysis.stemmed.split(' '), query).toEqual(expect.arrayContaining(analyzeIn(query, 'en').split(' ')));
    }
    for (const query of ['recetas veganas fáciles', 'rutina de cuidado de la piel', 'Meine Hautpflege-Routine'])
      expect(analyzeQuery(query).semanticReadable, query).toBe(false);
    // Spanish stems alone beside English's, not Italian's ("cuidad"): the detector is believed.
    expect(analyzeQuery('rutina de cuidado de la piel').stemmed).toBe('rutina cuidado piel rutin cuid');
  });

  it("detects a caption's language from its start, not from the English hashtags and handles at its end", () => {
    const caption = [
      'Minha rotina da manhã com o bebê ✨',
      '',
      'Hoje vou mostrar como uso a torre de aprendizagem no dia a dia. Tudo sobre maternidade.',
      '',
      'Use o cupom MARIA10 e ganhe 10% de desconto na Little Oak 🛍️',
      '',
      '🎥 com @kitchenwithtom',
      '',
      'Me segue em @momlifebymaria pra mais',
      '',
      '#toddleractivities #parenting #babysleep #dadlife #gentleparenting',
    ].join('\n');
    expect(documentLanguage(null, caption)).toBe('pt');
  });
});

describe('language detector footprint', () => {
  it("keeps only the detected languages' n-grams of eld's database (so an eld upgrade that moves it fails here)", () => {
    const footprint = detectorFootprint();
    expect(footprint).not.toBeNull();
    expect(footprint!.pruned).toBeGreaterThan(footprint!.ngrams);
    // Detection still works on what is kept.
    expect(
      detectLanguage('Hoy preparamos una receta muy fácil de pasta con tomate y albahaca para toda la familia')
        .language,
    ).toBe('es');
  });
});

describe('analysis memo', () => {
  it('answers each language its own analysis of one text, whichever was asked first', () => {
    const text = 'Minhas receitas favoritas para a semana toda';
    const first = analyzeIn(text, 'en');
    const pt = analyzeIn(text, 'pt');
    expect(pt).not.toBe(first);
    expect(analyzeIn(text, 'en')).toBe(first);
    expect(analyzeIn(text, 'pt')).toBe(pt);
    expect(pt.split(' ')).toContain(analyzeIn('receita', 'pt'));
  });
});
