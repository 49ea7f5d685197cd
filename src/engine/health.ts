/** How many posts of a sample hold vectors one model made. */
export interface VectorModelCount {
  /** The model's tag, `<model folder>@<dtype>`, as the embedder names itself. */
  model: string;
  posts: number;
}

/** Whether the engine can serve, for `/readyz`, and what its data was made with. */
export interface EngineHealth {
  /** The cluster's status (`green`, `yellow`); throws ServiceUnavailableError when it cannot serve. */
  check(): Promise<string>;
  /**
   * The models that made the vectors of a sample of posts (up to `sample` vector documents, oldest
   * segments first), most posts first: enough to tell whether the index holds another model's.
   */
  vectorModels(sample: number): Promise<VectorModelCount[]>;
}
