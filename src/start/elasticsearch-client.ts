import {
  Client,
  ClusterConnectionPool,
  SniffingTransport,
  UndiciConnection,
  type TransportOptions,
  type Connection,
  type ConnectionRequestOptions,
  type ConnectionRequestOptionsAsStream,
  type ConnectionRequestParams,
  type ConnectionRequestResponse,
  type ConnectionRequestResponseAsStream,
} from '@elastic/elasticsearch';
import type { Config } from '../internal/config.ts';

/**
 * The Elasticsearch client. Bounded time-outs, so an unreachable engine turns into a 503 within
 * ELASTICSEARCH_TIMEOUT_MS instead of a hanging request.
 *
 * One URL keeps the client as it always was: one retry. With several (the nodes of a cluster), a
 * request that could not reach a node (refused, reset) or that a node answered 502–504 is retried
 * on the next node, up to once per node; a node that could not be reached is left out of the
 * rotation and pinged back in (the `ping` resurrect strategy: after 60 s, doubling while it stays
 * down). A request that timed out is not retried: it may have been applied, and an overloaded
 * cluster must not get more. The client never sniffs: behind a proxy or in containers the
 * addresses nodes publish are not the ones to use, so only the configured URLs are.
 */
export function createElasticsearchClient(
  config: Pick<Config, 'ELASTICSEARCH_URL' | 'ELASTICSEARCH_TIMEOUT_MS'>,
): Client {
  const nodes = config.ELASTICSEARCH_URL;
  const common = {
    requestTimeout: config.ELASTICSEARCH_TIMEOUT_MS,
    sniffOnStart: false,
    compression: false,
    Transport: UntracedTransport,
  } as const;
  if (nodes.length === 1) return new Client({ ...common, node: nodes[0]!, maxRetries: 1 });
  return new Client({
    ...common,
    nodes,
    Connection: AnsweringConnection,
    ConnectionPool: ReachableNodesPool,
    resurrectStrategy: 'ping',
    maxRetries: nodes.length,
    sniffInterval: false,
    sniffOnConnectionFault: false,
  });
}

/**
 * The client's own transport with no OpenTelemetry spans: the service exports no traces (its
 * metrics are Prometheus'), and the no-op tracer cost ~3–5 % of an API node's CPU per request
 * (bench/search.md, "Where an API node's CPU goes"). Set here because the client (9.4.3) accepts
 * `openTelemetry` in its options but does not hand it on to the transport.
 */
class UntracedTransport extends SniffingTransport {
  constructor(options: TransportOptions) {
    super({ ...options, openTelemetry: { enabled: false } });
  }
}

/** A connection to one node that remembers whether the node answered its last request. */
class AnsweringConnection extends UndiciConnection {
  /** The node answered the last request sent to it, whatever the status. */
  answered = false;

  override request(
    params: ConnectionRequestParams,
    options: ConnectionRequestOptions,
  ): Promise<ConnectionRequestResponse>;
  override request(
    params: ConnectionRequestParams,
    options: ConnectionRequestOptionsAsStream,
  ): Promise<ConnectionRequestResponseAsStream>;
  override async request(
    params: ConnectionRequestParams,
    options: ConnectionRequestOptions | ConnectionRequestOptionsAsStream,
  ): Promise<ConnectionRequestResponse | ConnectionRequestResponseAsStream> {
    try {
      const response = await super.request(params, options);
      this.answered = true;
      return response;
    } catch (error) {
      this.answered = false;
      throw error;
    }
  }
}

/**
 * The cluster pool, except that a node that answers is never set aside. The transport marks a node
 * dead on a 502–504 answer too, before retrying elsewhere; but some 503s say nothing about the node:
 * a search on a point in time that lost another node answers 503 from every node. Marking each
 * healthy node dead in turn would leave only dead ones in the rotation, and the request would end
 * on the lost node (connection refused) instead of with Elasticsearch's answer, which the search
 * recovers from (errors.ts, isLostNode).
 */
class ReachableNodesPool extends ClusterConnectionPool {
  override markDead(connection: Connection): this {
    if (connection instanceof AnsweringConnection && connection.answered) return this;
    return super.markDead(connection);
  }
}
