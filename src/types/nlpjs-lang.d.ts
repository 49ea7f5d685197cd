// The Snowball stemmers of @nlpjs/lang-* (the packages ship no types); only what src/text uses.
declare module '@nlpjs/lang-es' {
  export class StemmerEs {
    /** The stem of one lowercase word. */
    stemWord(word: string): string;
  }
}
declare module '@nlpjs/lang-pt' {
  export class StemmerPt {
    stemWord(word: string): string;
  }
}
declare module '@nlpjs/lang-fr' {
  export class StemmerFr {
    stemWord(word: string): string;
  }
}
declare module '@nlpjs/lang-de' {
  export class StemmerDe {
    stemWord(word: string): string;
  }
}
declare module '@nlpjs/lang-it' {
  export class StemmerIt {
    stemWord(word: string): string;
  }
}
