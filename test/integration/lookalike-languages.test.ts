import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { accountEnrichmentObs, accountObs, at, postEnrichmentObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// "Creators like this one" in every language (bench/relevance.md, "Lookalikes"): the English
// model reads Spanish poorly, and its vectors put Spanish accounts together whatever they publish
// about. What the service knows besides the vectors — the topics of an account's posts, the same
// classification IDs in every language — must bring the accounts that publish on the same subject
// first. The real model and engine, through the API.
const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');

const SKINCARE: Array<[string, string]> = [
  ['night_skincare_routine', 'double cleanse, retinol serum and a thick barrier cream before bed'],
  ['morning_skincare_routine', 'vitamin C serum, light moisturizer and SPF 50 every morning'],
  ['acne_treatment', 'salicylic acid and hydrocolloid patches for breakouts'],
  ['sunscreen_review', 'testing five mineral sunscreens for white cast'],
  ['skin_barrier_repair', 'ceramides and a gentle low-pH cleanser for a damaged barrier'],
];
const SKINCARE_ES = [
  'Mi rutina de noche: doble limpieza, sérum de retinol y una crema barrera espesa antes de dormir',
  'Por la mañana: sérum de vitamina C, hidratante ligera y protector solar SPF 50 cada día',
  'Ácido salicílico y parches de hidrocoloide para los granos que no se van',
  'Probé cinco protectores solares minerales: ¿dejan la cara blanca?',
  'Ceramidas y un limpiador suave para reparar la barrera de la piel',
];
const FITNESS_ES: Array<[string, string]> = [
  ['strength_training', 'Entrenamiento de fuerza para principiantes: sentadillas, press y remo tres días por semana'],
  ['home_workout', 'Circuito de veinte minutos en casa sin material, con el peso del cuerpo'],
  ['running_training_plan', 'Mi plan para correr mis primeros 10 kilómetros: rodajes suaves y series'],
  ['glute_workout', 'Hip thrust y sentadilla búlgara para glúteos, despacio y con control'],
  ['mobility_routine', 'Diez minutos de movilidad de cadera antes de levantar pesas'],
];
const COOKING_ES: Array<[string, string]> = [
  ['one_pot_pasta', 'Pasta cremosa de tomate en una sola olla en quince minutos'],
  ['sourdough_baking', 'Pan de masa madre para principiantes: alimentar la masa madre y hornear en olla'],
  ['weeknight_dinners', 'Pollo al horno con limón, ajo y patatas en treinta minutos'],
  ['budget_meal_prep', 'Cinco comidas para la semana con arroz, alubias y verduras asadas'],
  ['air_fryer_recipes', 'Salmón crujiente y garbanzos en la freidora de aire'],
];
const TRAVEL_ES: Array<[string, string]> = [
  ['budget_travel_tips', 'Viajar barato: vuelos económicos, albergues y tours gratis a pie'],
  ['europe_itinerary', 'Siete días entre Lisboa, Oporto y el Algarve en tren'],
  ['packing_tips', 'Cubos de equipaje y ropa enrollada para viajar solo con maleta de mano'],
  ['hidden_gems', 'Playas tranquilas y restaurantes locales que las guías no cuentan'],
  ['solo_travel', 'Viajar sola: seguridad, conocer gente y comer sin incomodidad'],
];

interface Spec {
  handle: string;
  language: string;
  niches: string[];
  posts: Array<[topic: string, caption: string]>;
}
const ACCOUNTS: Record<string, Spec> = {
  piel: {
    handle: 'piel.es',
    language: 'es',
    niches: ['skincare'],
    posts: SKINCARE.map(([t], i) => [t, SKINCARE_ES[i]!]),
  },
  glow: { handle: 'glow.en', language: 'en', niches: ['skincare'], posts: SKINCARE.map(([t, c]) => [t, `My ${c}`]) },
  dewy: {
    handle: 'dewy.en',
    language: 'en',
    niches: ['skincare'],
    posts: SKINCARE.map(([t, c]) => [t, `What works for me: ${c}`]),
  },
  fuerza: { handle: 'fuerza.es', language: 'es', niches: ['fitness'], posts: FITNESS_ES },
  cocina: { handle: 'cocina.es', language: 'es', niches: ['home_cooking'], posts: COOKING_ES },
  viajes: { handle: 'viajes.es', language: 'es', niches: ['travel'], posts: TRAVEL_ES },
};
const accountId = (key: string) => mintId('account', `lkl-${key}`);
const keyOf = new Map(Object.keys(ACCOUNTS).map((k) => [accountId(k), k]));
let stack: Stack;

/** A post's enrichment: its topics, and what the model reads of it beside the caption. */
function postEnrichment(key: string, spec: Spec, i: number, topics: string[], producedAt: string): unknown {
  return postEnrichmentObs(`lkl-${key}-${i}`, {
    produced_at: producedAt,
    primary_language: spec.language,
    topics,
    content_summary: null,
  });
}

/** An account, what the enrichment says of it, its posts, and their enrichment without topics yet. */
function published(key: string, spec: Spec): unknown[] {
  return [
    accountObs({ platform_id: `lkl-${key}`, handle: spec.handle, biography: '' }),
    accountEnrichmentObs(`lkl-${key}`, {
      niches: spec.niches,
      publishing_languages: [spec.language],
      publishing_summary: null,
    }),
    ...spec.posts.flatMap(([, caption], i) => [
      postObs(`lkl-${key}`, { platform_id: `lkl-${key}-${i}`, caption, posted_at: at(-60 * 24 * (10 - i)) }),
      postEnrichment(key, spec, i, [], at(0)),
    ]),
  ];
}

/** The posts' topics, which arrive later and change nothing the model reads of the posts. */
function enriched(key: string, spec: Spec): unknown[] {
  return spec.posts.map(([topic], i) => postEnrichment(key, spec, i, [topic], at(60)));
}

beforeAll(async () => {
  stack = await startStack('lookalike-languages', { MODEL_DIR, SEARCH_RANKING: 'hybrid' });
  await stack.runtime.embedder.ready();
  // The posts and their vectors first, their topics after: an account's lookalike vector follows
  // its posts' topics when they arrive, though the posts' vectors do not change.
  for (const batch of [published, enriched]) {
    const response = await stack.ingest(Object.entries(ACCOUNTS).flatMap(([key, spec]) => batch(key, spec)));
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  }
}, 240_000);

afterAll(async () => {
  await stack?.close();
});

async function lookalikes(handle: string): Promise<string[]> {
  const response = await stack.post('/v1/social/accounts/search', { account: { similar_to: `@${handle}` }, limit: 5 });
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  return (response.body as { data: Array<{ id: string }> }).data.map((a) => keyOf.get(a.id) ?? a.id);
}

describe('lookalikes across languages', () => {
  it('a Spanish skincare creator is most like the skincare creators, not like other Spanish creators', async () => {
    const results = await lookalikes('piel.es');
    expect(results.slice(0, 2).sort(), results.join(', ')).toEqual(['dewy', 'glow']);
  });

  it('an English skincare creator finds the Spanish one before the Spanish creators of other subjects', async () => {
    const results = await lookalikes('glow.en');
    expect(results.indexOf('piel'), results.join(', ')).toBeLessThan(
      Math.min(...['fuerza', 'cocina', 'viajes'].map((k) => (results.includes(k) ? results.indexOf(k) : 99))),
    );
  });
});
