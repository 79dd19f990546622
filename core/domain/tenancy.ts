/** Organizations, users, memberships, datasets and API keys: who owns what and who may do what. */

/** Role integers of the wire: 0 read (user), 1 admin, 2 owner. */
export const Role = { Read: 0, Admin: 1, Owner: 2 } as const;
/** A role integer. */
export type RoleValue = (typeof Role)[keyof typeof Role];

/** Human name of a role, for messages. */
export const roleName = (role: number): string => (['read (0)', 'admin (1)', 'owner (2)'][role] ?? `role ${role}`);

/** A stored organization. */
export interface OrganizationRecord {
  readonly id: string;
  readonly name: string;
  readonly registerable: boolean;
  readonly deleted: boolean;
  readonly partnerConfiguration: Record<string, unknown>;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A stored user. */
export interface UserRecord {
  readonly id: string;
  readonly email: string;
  readonly name: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A user's role in one organization. */
export interface MembershipRecord {
  readonly id: string;
  readonly userId: string;
  readonly organizationId: string;
  readonly role: RoleValue;
  /** Routes this member may call (`METHOD /api/path`); null or empty means all. */
  readonly scopes: readonly string[] | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Search parameters forcibly applied to search and scroll requests made with a key. */
export type DefaultParams = Record<string, unknown>;

/** A stored API key (the raw key is never stored). */
export interface ApiKeyRecord {
  readonly id: string;
  readonly organizationId: string;
  /** The user the key acts for, when it was minted by or for a user. */
  readonly userId: string | null;
  readonly name: string;
  readonly role: RoleValue;
  /** Datasets the key may use; empty means all datasets of its organization. */
  readonly datasetIds: readonly string[];
  /** Routes the key may call; empty means all. */
  readonly scopes: readonly string[];
  readonly defaultParams: DefaultParams | null;
  readonly expiresAt: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A stored dataset. `serverConfiguration` holds the UPPER_SNAKE keys of the wire. */
export interface DatasetRecord {
  readonly id: string;
  readonly organizationId: string;
  readonly name: string;
  readonly trackingId: string | null;
  readonly serverConfiguration: Record<string, unknown>;
  readonly deleted: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
}
