export {
  findSourceConfiguration,
  type SourceConfiguration,
  saveSourceConfiguration,
  sourceConfigurationSchema,
} from './repository/source-configuration-repository';
